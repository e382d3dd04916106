"""Functions of the project's other files given the DDP model or a loader
(``check_accuracy(val_loader, model)``), or called for their side effects alone
(``setup_logging(config)``): their bodies are invisible here, so the prints and writes in them,
which now happen once per rank, are reported (once per function)."""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from ddpify.analysis.modules import name_readers
from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.names import RUNTIME_MODULE
from ddpify.convert.planners.calls import COPIES, behind_rank_test, imported_helper
from ddpify.convert.planners.models import optimizer_builders
from ddpify.convert.planners.rank_zero import imported_from_local_module, is_call_statement, statement_of
from ddpify.convert.planners.wrap_options import DATA_PARALLEL, ON_RANK_DEVICE
from ddpify.convert.record import Recording
from ddpify.findings import Change, ManualItem
from ddpify.tree.cstutil import callee_name, code, is_simple_reference, of_types

# The runtime's calls that give back a loader (a converted script's training loaders).
_RUNTIME_LOADERS = ("distributed_loader", "shard", "unsharded")


# what functions that load, compute or change training state are called (``read_data(opt)``,
# ``adjust_learning_rate(optimizer, 0.8)``, ``clip_gradient(optimizer, 5)``): every rank needs
# their effect, so they are no side-effect calls to move to rank 0 (a name-based filter on a report)
_CHANGES_STATE = re.compile(
    r"(read|load|get|fetch|build|prepare|parse|compute|update|adjust|clip|init|set|scale|decay|warmup|define|declare|register|add)(_|$)",
    re.IGNORECASE,
)
# what another file's logger-like callables are called: the ones a path is given to write into
_WRITER_NAME = re.compile(r"log|writer|record|visuali|monitor|track|board|saver|plot", re.IGNORECASE)
# `./logs`, `runs/exp1`, `out.csv`: a relative path, a folder or a file with an extension
_PATH_LIKE = re.compile(r"^\.{1,2}/|/|^[\w-]+\.(txt|csv|json|log|ya?ml|pt|pth|pkl|png|jpg|npy|h5)$")


def report(recording: Recording, facts: Facts) -> None:
    """``check_accuracy(val_loader, model)`` imported from the project's own modules: its body
    is invisible, so the prints and writes in it, which now happen once per rank, are reported
    once per function. Calls the conversion already handles (checkpoint helpers, loads,
    optimizer builders, guarded statements) and this file's own functions are not."""
    reported: set[str] = set()
    handled = set(recording.checkpoint_calls) | {builder for builder, _ in optimizer_builders(recording)}
    for call in recording.reference_calls:
        helper = imported_helper(recording, call)
        if helper is None or helper in reported or call in handled or _rewritten(recording, facts, call):
            continue
        unwrapped = [code(a.value) for a in call.args if a in facts.unwrapped_args]
        handed = _handed_over(recording, facts, call) if not unwrapped else [f"{u} (the plain model)" for u in unwrapped]
        if handed:
            reported.add(helper)
            if not unwrapped and (names.TRAINER_NAME.search(helper) or _gets_an_optimizer(recording, call)):
                _placed_for_the_other_file(recording, facts, call, helper)
                _report_data_elsewhere(recording, facts, call, helper, wrapped=any(h.endswith("(the DDP model)") for h in handed))
            if _quiet(recording, call) or (facts.trains_in_modules and call in facts.wrapped_for_modules):
                continue  # writes nothing, or its module is converted alongside (its writes made safe there)
            facts.manual.append(
                ManualItem(
                    recording.line(call),
                    f"{helper}() (another file) runs on every rank with {', '.join(handed)}: "
                    "what it writes (files, images, logs, progress bars) is written once per rank",
                    _handed_over_todo(handed)
                    if not unwrapped
                    else f"it gets ddpify.unwrap(...), so it runs no DDP forward: if it only samples or writes, put the "
                    f"statement of {helper}() under `if ddpify.is_main_process():`, else guard its writes inside it",
                )
            )
    _report_side_effect_helpers(recording, facts, reported, handled)


def _quiet(recording: Recording, call: cst.Call) -> bool:
    """The project's code ``call`` runs is read, and it writes nothing (``Helper.writes``; its
    prints and log lines show on rank 0 only in a converted script): running it on every rank
    repeats nothing. A model member it reaches past the wrapper is the runtime's to catch
    (``ddpify.runtime``'s guard names the bypass)."""
    helper = recording.analysis.source.project_call(call)
    return helper is not None and not helper.writes


def _report_data_elsewhere(recording: Recording, facts: Facts, call: cst.Call, helper: str, *, wrapped: bool) -> None:
    """The other file trains, and this file neither builds a training loader nor hands one to
    it (``train_model(model, criterion, optimizer)`` with loaders that are globals of a third
    module): nothing here can shard that data, and every rank would train on all of it. Given
    the DDP models (``wrapped``) outside any loop of this file (the training loop is that
    module's), that module is converted alongside when the output is written beside this file
    (``Facts.wrapped_for_modules``; ``ddpify.companions``), and shards it there."""
    loaders = {v.key for v in facts.loader_variables} | _converted_loaders(recording)
    training_here = any(f.role in ("train", "decided") for f in facts.loaders.values()) or facts.helper_loaders
    its_loop = wrapped and not any(isinstance(a, (cst.For, cst.While)) for a in recording.ancestors(call))
    if training_here or any(code(a.value) in loaders or names.LOADER_VARIABLE.search(code(a.value)) for a in call.args):
        # the data is this file's, sharded here; a trainer that runs the loop and writes (Conv-TasNet's
        # Solver(data, model, optimizer, args).train() saving checkpoints) is converted alongside all the same
        helper_code = recording.analysis.source.project_call(call)
        if its_loop and helper_code is not None and helper_code.trains and helper_code.writes:
            facts.wrapped_for_modules.add(call)
        return
    if its_loop:
        facts.wrapped_for_modules.add(call)
        if facts.trains_in_modules:
            return  # that module is converted alongside: its loader is sharded there
    facts.manual.append(
        ManualItem(
            recording.line(call),
            f"{helper}() (another file) trains the DDP model on data this file neither builds nor hands to it: ddpify cannot "
            "shard it here, so every rank would train on the whole dataset (no speed-up)",
            "where its training DataLoader is built, give it sampler=torch.utils.data.distributed.DistributedSampler(dataset) "
            "(no shuffle=True; call sampler.set_epoch(epoch) each epoch), or build it with ddpify.distributed_loader(...) "
            "(same arguments)",
        )
    )


def _report_side_effect_helpers(recording: Recording, facts: Facts, reported: set[str], handled: set[cst.Call]) -> None:
    """``setup_logging(config)``, ``plot_images(sampled)``: a statement that only calls a
    function of another project file runs it on every rank, and whatever it plots or writes
    happens once per rank (prints show on rank 0 only: the runtime's setup); a body ddpify cannot
    read, or one that writes, is reported once per function, not guarded (it may also do work
    every rank needs). Only modules that are local (a relative
    import, or a top-level module neither standard nor installed: ``rank_zero.imported_from_local_module``)
    count, so an installed library's ``sns.set()`` is not taken for the project's. Not reported: seeding helpers (every
    rank must seed), calls given a model (they change or run it: ``init_weights(model)``, or
    ``report`` above for the DDP model) or a loader, hand-overs to a trainer (``drivers``), a
    function of the project that trains (``Helper.trains``: every rank must run it), and
    calls the conversion rewrites or that run behind a rank test already."""
    models = facts.model_keys | recording.module_like
    loaders = {v.key for v in facts.loader_variables} | _converted_loaders(recording)
    for call in recording.analysis.source.of_types(cst.Call):
        helper = imported_helper(recording, call)
        if helper is None or helper in reported or call in handled or call in facts.trained_elsewhere:
            continue
        if not is_simple_reference(call.func) or _of_library_object(recording, call):
            continue  # `Trainer(model).run()`, `cfg.merge_from_file(f)` of yacs: not a function of the project
        path = _path_argument(call) if _WRITER_NAME.search(helper) else None
        kept = not is_call_statement(statement_of(recording, call), call)
        if kept and path is None:
            continue  # its result is used: it computes something (unless it is given a path)
        if not imported_from_local_module(recording, call.func):
            continue
        if (
            names.SEED_HELPER.search(callee_name(call) or "")
            or names.is_rank_zero_client(recording.qualified(call))
            or call in facts.rank_zero_clients
        ):
            continue
        if path is None and _CHANGES_STATE.match(callee_name(call) or ""):
            continue  # read_data(opt), adjust_learning_rate(optimizer, 0.8): every rank needs what it does
        if any(code(a.value) in models or code(a.value) in loaders for a in call.args) or _rewritten(recording, facts, call):
            continue
        project = recording.analysis.source.project_call(call)
        if project is not None and (project.trains or not project.writes):
            continue  # it trains (every rank must run it), or it writes nothing (its prints show on rank 0 only)
        reported.add(helper)
        what = "is called for its side effects" if path is None else f"is given the path {path}"
        seen = "its code writes files" if project is not None else "ddpify cannot see its body"
        facts.manual.append(
            ManualItem(
                recording.line(call),
                f"{helper}() (another file) {what} on every rank: {seen}, so whatever it plots or writes now happens once "
                "per rank (its prints show on rank 0 only)",
                "if it only plots or writes files (no collective, no forward of the DDP model, nothing the other "
                f"ranks need), {_on_rank_zero(call, kept)}; if the other ranks read what it writes, call ddpify.barrier() after it",
            )
        )


def _of_library_object(recording: Recording, call: cst.Call) -> bool:
    """``opt.merge_from_file(path)`` where ``opt`` is a project module's ``cfg = CN()`` (yacs):
    a library's method (``Helper.library_object``)."""
    if not isinstance(call.func, cst.Attribute):
        return False
    owner = recording.analysis.source.project.named(code(call.func.value))
    return owner is not None and owner.library_object


def _on_rank_zero(call: cst.Call, kept: bool) -> str:
    """How to run ``call`` on rank 0 alone: a guard for a call made for its effects, the no-op
    object for one whose result is kept (``self.logger = Logger(...)``)."""
    if kept:
        arguments = ", ".join(code(a).rstrip(", ") for a in call.args)
        return f"create it on rank 0 only: ddpify.rank_zero({code(call.func)})({arguments}) (the other ranks get a no-op object)"
    return f"call it on rank 0 only: `if ddpify.is_main_process(): {code(call)}`"


def _path_argument(call: cst.Call) -> str | None:
    """A string argument that names a file or folder (``Logger('./logs')``,
    ``Recorder(out_dir="runs/exp1")``): what another file's code is given to write into."""
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.SimpleString) and _PATH_LIKE.search(str(value.evaluated_value)):
            return code(value)
    return None


def plan_plain_handoffs(recording: Recording, facts: Facts) -> None:
    """Another file's code given the DDP model where it cannot be training it gets the plain
    module, ``ddpify.unwrap(model)`` (``Facts.unwrapped_args``): a call under ``no_grad`` /
    ``inference_mode`` (sampling, evaluation: no gradients, so DDP has nothing to average, and
    the wrapper lacks the model's own attributes, pradyu's ``generate_text(model)`` reading
    ``model.config``), a call that also gets a copy of the model made before the wrap
    (``ema.step_ema(ema_model, model)``: the copy is a plain module, the pair must match), and
    ``copy.deepcopy(model)`` after the wrap (meliketoy's best model, saved and loaded alone)."""
    held = {h.key for h in facts.held_models}
    no_grad = recording.analysis.dataflow.batches.no_grad_around
    readers = _name_readers(recording)
    for call in recording.reference_calls:
        name = callee_name(call)
        if name is None or call in recording.checkpoint_calls or _runtime(recording, call):
            continue  # ddpify.unwrap(model) itself: converting twice changes nothing
        reads = readers(call)
        if recording.defines(name) and not reads:
            continue
        for index, arg in enumerate(call.args):
            key = code(arg.value)
            if name in COPIES and key not in facts.model_keys and arg is call.args[0]:
                found = recording.analysis.models.model_of(arg.value)  # the model through a parameter
                key = found.key if found is not None and key in found.references else key
            if key not in facts.model_keys or key in held or arg in facts.unwrapped_args or _before_wrap(recording, facts, call, key):
                continue
            if index in reads and arg.keyword is None:  # ema_helper.register(model): keyed by its parameters' names
                facts.unwrapped_args[arg] = (
                    "code that keys what it keeps by the model's parameter names (the wrapper's start with 'module.')"
                )
            elif name in COPIES:  # best = copy.deepcopy(model) after the wrap
                facts.unwrapped_args[arg] = f"{name} (a copy of the DDP wrapper drags the process group into checkpoints)"
            elif no_grad(call) is not None:
                facts.unwrapped_args[arg] = "code that runs without gradients (no_grad: DDP has nothing to average there)"
            elif copies := [code(o.value) for o in call.args if o is not arg and _copy_of(recording, o.value, key)]:
                facts.unwrapped_args[arg] = f"code that also gets {copies[0]}, its plain copy made before the wrap,"


def _name_readers(recording: Recording) -> Callable[[cst.Call], tuple[int, ...]]:
    """The argument positions a call hands to a function that reads their members by name
    (``Helper.reads_names``: a project helper; ``name_readers``: this file's own, every function
    the call may run agreeing)."""
    source = recording.analysis.source
    own = name_readers(source, [f for functions in source.functions.values() for f in functions])

    by_method: dict[str, tuple[int, ...]] = {}  # ``x.run(...)``: every method named run, read once

    def agreed(call: cst.Call) -> tuple[int, ...]:
        found = [set(own.get(f, ())) for f in source.functions_called(call)]
        return tuple(sorted(set.intersection(*found))) if found else ()

    def positions(call: cst.Call) -> tuple[int, ...]:
        helper = source.project_call(call)
        if helper is not None:
            return helper.reads_names
        if isinstance(call.func, cst.Attribute):
            name = call.func.attr.value
            if name not in by_method:
                by_method[name] = agreed(call)
            return by_method[name]
        return agreed(call)

    return positions


def _runtime(recording: Recording, call: cst.Call) -> bool:
    return any(q == RUNTIME_MODULE or q.startswith(RUNTIME_MODULE + ".") for q in recording.qualified(call))


def _copy_of(recording: Recording, value: cst.BaseExpression, key: str) -> bool:
    """``value`` names a variable assigned ``copy.deepcopy(key)...`` (an EMA copy)."""
    for _, assigned in recording.analysis.source.assignments.get(code(value), []):
        calls = of_types(assigned, cst.Call) if assigned is not None else []
        if any(callee_name(c) == "deepcopy" and c.args and code(c.args[0].value) == key for c in calls):
            return True
    return False


def _rewritten(recording: Recording, facts: Facts, call: cst.Call) -> bool:
    """Guarded or ordered (by the script or the conversion: ``ddpify.main_process_first()``
    around a directory-making helper) or given unsharded loaders already (a call given
    ``ddpify.unwrap(model)`` is still reported: its prints happen on every rank)."""
    statement = recording.parent(recording.parent(call) or call)
    return (
        statement in facts.main_process_only
        or statement in facts.node_rewrites
        or any(a in facts.unsharded_args for a in call.args)
        or behind_rank_test(recording, call)
    )


def _handed_over(recording: Recording, facts: Facts, call: cst.Call) -> list[str]:
    """The trained models (once wrapped) and loaders among ``call``'s arguments, as text
    whose suffix says what to do (see _handed_over_todo)."""
    loaders = {v.key: v.role for v in facts.loader_variables}
    held = {h.key for h in facts.held_models}  # left unwrapped: no DDP model to speak of
    handed: list[str] = []
    for arg in call.args:
        key = code(arg.value)
        if key in facts.model_keys and key not in held and not _before_wrap(recording, facts, call, key):
            handed.append(f"{key} (the DDP model)")
        elif key in loaders and loaders[key] != "decided":  # decided per pass: no one kind to name
            kind = {"train": "a sharded training", "eval": "a full evaluation"}.get(loaders[key], "an unsharded")
            handed.append(f"{key} ({kind} loader)")
    return handed


def _gets_an_optimizer(recording: Recording, call: cst.Call) -> bool:
    """``SimCLR(model=model, optimizer=optimizer, ...)``: code given an optimizer of this file
    (a variable assigned ``torch.optim.*(...)``) trains what it is given."""
    for arg in call.args:
        if not is_simple_reference(arg.value):
            continue
        for _, value in recording.analysis.source.assignments.get(code(arg.value), []):
            if isinstance(value, cst.Call) and names.is_optimizer(recording.qualified(value)):
                return True
    return False


def _placed_for_the_other_file(recording: Recording, facts: Facts, call: cst.Call, helper: str) -> None:
    """A DDP model handed to another file's trainer (``Trainer(generator, ...)``, ``fit(model)``:
    ``names.TRAINER_NAME``; or code also given its optimizer) may be moved there after the wrap (``self.G.cuda()``), which DDP
    cannot follow: its wrap gets
    ``on_rank_device=True``, so under CUDA it is on this rank's GPU already and that move is
    none. Without it a CPU model stays on the CPU (``ddpify.runtime.prepare_model``)."""
    parallel = _data_parallel_models(recording)
    for arg in call.args:
        key = code(arg.value)
        for wrapped, anchor, _ in facts.model_wraps:
            options = facts.wrap_options.get((anchor, wrapped), "")
            if wrapped != key or ON_RANK_DEVICE in options:
                continue
            added = (ON_RANK_DEVICE, DATA_PARALLEL) if key in parallel else (ON_RANK_DEVICE,)
            facts.wrap_options[anchor, wrapped] = ", ".join(o for o in (options, *added) if o)
            facts.changes.append(
                Change(
                    recording.line(anchor),
                    f"{key} goes on to {helper}() of another file, which may move it after the wrap: wrapped with "
                    f"{ON_RANK_DEVICE} (under CUDA it is on this rank's GPU first, so a later .cuda() there moves nothing)",
                )
            )
            if key in parallel:
                facts.changes.append(
                    Change(
                        recording.line(anchor),
                        f"{key} was an nn.DataParallel, and {helper}() may read {key}.module: with {DATA_PARALLEL} one "
                        "process keeps that wrapper, as the script did (under DDP the wrapper has .module too)",
                    )
                )


def _data_parallel_models(recording: Recording) -> set[str]:
    """The names this file wraps in ``nn.DataParallel`` (``model = nn.DataParallel(net)``:
    ``model`` and ``net``); the converter removes that wrapper."""
    found: set[str] = set()
    for call in recording.analysis.source.of_types(cst.Call):
        if recording.qualified(call) & names.DATAPARALLEL and call.args:
            found.add(code(call.args[0].value))
            statement = recording.parent(call)
            if isinstance(statement, cst.Assign):
                found.update(code(t.target) for t in statement.targets)
    return found


def _before_wrap(recording: Recording, facts: Facts, call: cst.Call, key: str) -> bool:
    """``init_weights(model)`` above ``model = ddpify.prepare_model(model)`` (planned, or
    there already) in the same function: the plain model, still being built."""
    wraps = [(anchor, where) for wrapped, anchor, where in facts.model_wraps if wrapped == key]
    if key in recording.existing_wraps:
        wraps.append((recording.existing_wraps[key], "after"))
    for anchor, where in wraps:
        if recording.function_of(anchor) is recording.function_of(call):
            position = recording.position(anchor)
            return recording.line(call) < (position.start.line if where == "before" else position.end.line + 1)
    return False


def _converted_loaders(recording: Recording) -> set[str]:
    """Names assigned ``ddpify.distributed_loader(...)`` or another runtime loader call: a
    converted script's loaders, which ``Facts.loader_variables`` leaves out."""
    return {
        name
        for name, values in recording.values.items()
        if any(isinstance(v, cst.Call) and {f"{RUNTIME_MODULE}.{f}" for f in _RUNTIME_LOADERS} & recording.qualified(v) for v in values)
    }


def _handed_over_todo(handed: list[str]) -> str:
    """What to do about a function of another file given ``handed`` (see _handed_over)."""
    todo = "guard its writes inside it (if ddpify.is_main_process():)"
    wrapped = [h.removesuffix(" (the DDP model)") for h in handed if h.endswith("(the DDP model)")]
    if wrapped:
        model = wrapped[0]
        todo += (
            ", not the call: every rank must run the DDP model's forward; there it receives the DDP wrapper: reach the "
            f"model's own methods and attributes other than forward through {model}.module (or ddpify.unwrap({model})), "
            "and only calls of its forward average gradients"
        )
    if any(h.endswith("training loader)") for h in handed):
        todo += "; a metric it computes over the sharded loader covers one rank's shard: reduce it (torch.distributed.all_reduce)"
    return todo

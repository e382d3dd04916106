"""Driver files: a script with no training loop of its own that builds a model and hands it to
a trainer of another project file (minGPT's ``model = GPT(cfg)``;
``trainer = Trainer(cfg.trainer, model, train_dataset)``; ``trainer.run()``). Under torchrun
every rank runs the whole driver, so its prints, saves and file writes (often in a callback the
trainer calls) happen once per rank: the file is converted like one with training code (its
output goes to rank 0 through the usual planners) and the hand-over is reported, because the
training, the wrap and the sharding are in the other file's code, which ddpify cannot see.

The process group is set up here too (``ddpify.distributed()`` around the ``__main__`` block,
or ``ddpify.setup()`` after the imports, as ``bootstrap`` decides): the driver is what torchrun
starts, and the trainer's module may set the group up only in its own ``__main__`` block, which
an import does not run (its ``ddpify.prepare_model`` would then find no group and train
unwrapped). Setting up is idempotent, so a converted trainer module that also sets it up at
import time is fine, and with plain ``python`` (one process) nothing is set up at all.

What counts, so that a file with nothing to convert stays byte-identical:

- the callee is imported from the project's own modules (``calls.imported_helper``: not this
  file's code, the standard library or a known library such as Lightning, whose trainers set
  DDP up themselves) and its name says it trains (``names.TRAINER_NAME``: ``Trainer``,
  ``train_model``, ``fit``, ``Solver``, ``Engine``... a heuristic; ``init_weights(model)`` is
  not a hand-over), and the call is not made under ``no_grad`` or behind a rank test;
- an argument is a variable this file binds to a model it builds: a call that constructs
  parameters (``ddpify.analysis.modules.constructs_module``: a module class of the file,
  ``nn.Linear``, ``torchvision.models``), or any call whose result the file also uses as a
  model only a module can be (``model.eval()``, ``.parameters()``, ``.state_dict()``: a
  tensor has none of these). A file that trains models itself is the other planners' (``handed_over``).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameSource

from ddpify.analysis.modules import RETURNS_SELF, constructs_module
from ddpify.convert import names
from ddpify.convert.fact_types import Facts, item
from ddpify.convert.planners.calls import behind_rank_test, imported_helper
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import callee_name, code

# Methods only an nn.Module has (a tensor has none of them): evidence that a variable is a model.
_MODULE_ONLY = frozenset({"train", "eval", "parameters", "named_parameters", "state_dict", "load_state_dict", "modules", "named_modules"})


def plan(recording: Recording, facts: Facts) -> None:
    """``Facts.trained_elsewhere``: the calls that hand a model built here to another file's
    trainer, each reported once per trainer at its first call. Only in a file without training
    code of its own: where this file trains, ``handed_over`` speaks of the models it hands on
    (a frozen teacher given to ``distill_train(student, teacher)`` is not trained there)."""
    if facts.has_training_code or facts.trains_in_modules:
        return  # trains here, or the training modules are converted alongside (``ddpify.companions``)
    reported: set[str] = set()
    for call in recording.reference_calls:
        trainer = _trainer(recording, call)
        if trainer is None:
            continue
        models = [code(a.value) for a in call.args if isinstance(a.value, cst.Name) and _built_model(recording, facts, a.value)]
        if not models:
            continue
        facts.trained_elsewhere.add(call)
        if trainer in reported:
            continue
        reported.add(trainer)
        where = _module_of(recording, call)
        facts.manual.append(
            item(
                recording.line(call),
                f"{trainer}() ({where}, another file) is given {', '.join(models)}, built here: training happens in that file's "
                "code, which ddpify cannot see from here, so nothing here wraps the model or shards its data "
                "(this file's prints, saves and writes now run on rank 0, and it sets the process group up)",
                f"convert {where} too with ddpify: the model must be wrapped there (ddpify.prepare_model) before it trains, "
                "and its training loader sharded",
            )
        )


def _trainer(recording: Recording, call: cst.Call) -> str | None:
    """The project helper ``call`` runs when it is named like a trainer and every rank runs it
    with gradients on; None otherwise."""
    helper = imported_helper(recording, call)
    name = callee_name(call) or ""
    if helper is None or not names.TRAINER_NAME.search(name) or call in recording.checkpoint_calls:
        return None
    if recording.analysis.dataflow.batches.no_grad_around(call) is not None or behind_rank_test(recording, call):
        return None
    return helper


def _built_model(recording: Recording, facts: Facts, name: cst.Name) -> bool:
    """``name`` holds a model this file builds and does not train itself (see the module docstring)."""
    if name.value in facts.model_keys:
        return False
    graph = recording.analysis.dataflow.values
    built = [_made(value) for value in recording.values_of(name.value)]
    calls = [value for value in built if isinstance(value, cst.Call)]
    return any(constructs_module(graph, c) for c in calls) or bool(calls) and _used_as_module(recording, name.value)


def _made(value: cst.BaseExpression) -> cst.BaseExpression:
    """The call that builds ``GPT(cfg).to(device).train()``: ``GPT(cfg)``."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in RETURNS_SELF:
        value = value.func.value
    return value


def _used_as_module(recording: Recording, variable: str) -> bool:
    """``model.eval()``, ``model.state_dict()``...: a method only an ``nn.Module`` has."""
    calls = recording.analysis.source.calls_by_callee
    return any(isinstance(c.func, cst.Attribute) and code(c.func.value) == variable for m in _MODULE_ONLY for c in calls.get(m, []))


def _module_of(recording: Recording, call: cst.Call) -> str:
    """``mingpt.trainer`` for ``from mingpt.trainer import Trainer``; the star import's module
    cannot be named."""
    for qualified in recording.qualified_names(call):
        if qualified.source is QualifiedNameSource.IMPORT and "." in qualified.name:
            return qualified.name.rsplit(".", 1)[0]
    return "the module it comes from"

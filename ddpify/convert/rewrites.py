"""The converter's rewrites as pure functions of one node: ``node -> new node``.

The converter's transformer decides *where* to apply them; the ``ddpify check`` rules reuse
the very same functions as their fixes, so a fix and a conversion can never disagree.
Every piece of inserted code comes from ``templates/snippets.py.j2``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from ddpify import snippets
from ddpify.analysis.launch_args import LOCAL_RANK_FLAGS
from ddpify.convert import names
from ddpify.tree import cstutil
from ddpify.tree.cstutil import code, is_simple_reference, single_statement

RT = "ddpify"  # the name converted scripts import the runtime as
RUNTIME_IMPORT = ("ddpify.runtime", RT)  # (module, asname) for AddImportsVisitor


def with_runtime_import(module: cst.Module) -> cst.Module:
    """``import ddpify.runtime as ddpify`` added by libcst's ``AddImportsVisitor`` (kept as it
    is when present), run on the module's import prologue only.

    The visitor reads and edits nothing but the statements up to the first one that is not an
    import (after a docstring): it gathers the existing imports there and inserts after them,
    with an empty line before the next statement. Handing it just that prologue gives the
    same module as handing it the whole file, without two full traversals of a long script
    (half of a conversion's time)."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    AddImportsVisitor.add_needed_import(context, RUNTIME_IMPORT[0], asname=RUNTIME_IMPORT[1])
    end = _prologue_end(module)
    prologue = module.with_changes(body=module.body[: end + 1])  # + the first other statement
    done = AddImportsVisitor(context).transform_module(prologue)
    return module.with_changes(body=[*done.body, *module.body[end + 1 :]])


def _prologue_end(module: cst.Module) -> int:
    """Index of the first statement, after the first one (a docstring or a ``__strict__``
    flag, which the visitor steps over), that is not a one-import line. A longer prologue than
    the visitor reads is harmless; a shorter one is not."""
    body = module.body
    index = 0 if body and single_statement(body[0], cst.Import, cst.ImportFrom) else 1
    while index < len(body) and single_statement(body[index], cst.Import, cst.ImportFrom):
        index += 1
    return index


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value, equal=_EQUAL)


def has_keyword(call: cst.Call, name: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == name for a in call.args)


def appended(call: cst.Call, *added: cst.Arg) -> list[cst.Arg]:
    """``call``'s arguments and then ``added``, laid out like the arguments before them: on a
    line of their own when those are, after ``, `` on one line; the line break or trailing comma
    that ended the call's arguments ends them (``drop_last=True\n)`` -> ``drop_last=True,
    per_process_batch=True\n)``)."""
    args, extra = list(call.args), list(added)
    if not args or not extra:
        return fix_commas(args + extra)
    last = args[-1]
    between = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else None
    separator = between or cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    extra = [a.with_changes(comma=separator) for a in extra]
    if isinstance(last.comma, cst.Comma):  # `b,\n)`: the trailing comma moves to the end
        args[-1] = last.with_changes(comma=separator)
        extra[-1] = extra[-1].with_changes(comma=last.comma)
    else:
        args[-1] = last.with_changes(comma=separator, whitespace_after_arg=cst.SimpleWhitespace(""))
        extra[-1] = extra[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=last.whitespace_after_arg)
    return args + extra


def fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Commas between arguments, keeping the caller's own comma whitespace where it exists."""
    fixed: list[cst.Arg] = []
    for index, arg in enumerate(args):
        if index < len(args) - 1 and not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        fixed.append(arg)
    return fixed


def device() -> cst.BaseExpression:
    return snippets.expression("device", rt=RT)


def is_cuda_literal(value: cst.BaseExpression, *, allow_int: bool) -> bool:
    """``"cuda"``, ``"cuda:0"`` (``0`` with ``allow_int``), and a GPU picked by a number from
    elsewhere (``f"cuda:{config['gpu']}"``, ``"cuda:%d" % gpu``, ``"cuda:{}".format(gpu)``):
    one GPU for every rank, where each must use its own."""
    if isinstance(value, cst.SimpleString):
        return bool(names.CUDA_STRING.match(str(value.evaluated_value)))
    if isinstance(value, cst.FormattedString):
        parts = value.parts
        return (
            len(parts) == 2
            and isinstance(parts[0], cst.FormattedStringText)
            and parts[0].value == "cuda:"
            and isinstance(parts[1], cst.FormattedStringExpression)
        )
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Modulo) and isinstance(value.left, cst.SimpleString):
        return value.left.evaluated_value in ("cuda:%d", "cuda:%s", "cuda:%i")
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "format":
        template = value.func.value
        return isinstance(template, cst.SimpleString) and template.evaluated_value == "cuda:{}" and len(value.args) == 1
    return allow_int and isinstance(value, cst.Integer)


# ---------------------------------------------------------------- data
def distributed_loader(call: cst.Call, *, per_process_batch: bool, only_when_training: bool = False) -> cst.Call:
    """``DataLoader(...)`` → ``ddpify.distributed_loader(...)``, same arguments."""
    added = []
    if per_process_batch and not has_keyword(call, "per_process_batch"):
        added.append(keyword("per_process_batch", snippets.expression("per_process_batch")))
    if only_when_training and not has_keyword(call, "only_when_training"):
        added.append(keyword("only_when_training", cst.Name("True")))
    return call.with_changes(func=snippets.expression("distributed_loader", rt=RT), args=appended(call, *added))


def chosen(test: cst.BaseExpression, when: cst.BaseExpression, otherwise: cst.BaseExpression) -> cst.IfExp:
    """``when if test else otherwise``: one loader of a dict comprehension sharded for some keys."""
    return cst.IfExp(test=test, body=when, orelse=otherwise)


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with one more keyword argument (``generator=ddpify.rank_generator()``)."""
    return call.with_changes(args=appended(call, keyword(name, value)))


def sharded(loader: str, *, per_process_batch: bool, only_when_training: bool = False) -> cst.BaseStatement:
    """``loader = ddpify.shard(loader)``: a DataLoader built in another file, rebuilt at run time
    with a distributed sampler (the global batch split like ``distributed_loader``'s);
    ``only_when_training``: for the passes that train only (its role is the run's to tell)."""
    statement = snippets.statement("shard", rt=RT, loader=loader, options="only_when_training=True" if only_when_training else "")
    if not per_process_batch:
        return statement
    assert isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign)
    assign = statement.body[0]
    call = assign.value
    assert isinstance(call, cst.Call)
    flag = keyword("per_process_batch", snippets.expression("per_process_batch"))
    return statement.with_changes(body=[assign.with_changes(value=call.with_changes(args=appended(call, flag)))])


def with_set_epoch(loop: cst.For, loaders: list[str]) -> cst.For:
    """``ddpify.set_epoch(loader, epoch)`` as the first statements of an epoch loop."""
    assert isinstance(loop.body, cst.IndentedBlock)
    epoch = code(loop.target)
    calls = [snippets.statement("set_epoch", rt=RT, loader=key, epoch=epoch) for key in loaders]
    return loop.with_changes(body=loop.body.with_changes(body=[*calls, *loop.body.body]))


# ---------------------------------------------------------------- model
def without_dataparallel(call: cst.Call) -> cst.BaseExpression:
    """``nn.DataParallel(model, ...)`` → ``model``: DDP replaces it."""
    return call.args[0].value


def without_data_parallel_function(call: cst.Call) -> cst.Call:
    """``nn.parallel.data_parallel(module, input, ...)`` → ``module(input)``."""
    return cst.Call(func=call.args[0].value, args=[call.args[1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])


def unwrapped(model: cst.BaseExpression) -> cst.BaseExpression:
    """``model.module`` → ``ddpify.unwrap(model)`` (works wrapped or not)."""
    return snippets.expression("unwrap", rt=RT, model=code(model))


def through_wrapper(call: cst.CSTNode) -> cst.CSTNode:
    """``self(x)`` / ``self.forward(x)`` in a model's own training method →
    ``ddpify.wrapped(self)(x)``: the forward runs through the model's DDP wrapper."""
    assert isinstance(call, cst.Call)
    func = call.func
    own = func.value if isinstance(func, cst.Attribute) else func
    return call.with_changes(func=snippets.expression("wrapped", rt=RT, model=code(own)))


def through_ddp(call: cst.CSTNode) -> cst.CSTNode:
    """``model.log_probs(x)`` → ``ddpify.through_ddp(model).log_probs(x)``: the method runs as
    the DDP wrapper's forward."""
    assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
    owner = call.func.value
    if isinstance(owner, cst.Call) and code(owner.func).endswith(".unwrap") and owner.args:
        owner = owner.args[0].value  # ddpify.unwrap(model), written for the member DDP lacks
    return call.with_changes(func=call.func.with_changes(value=snippets.expression("through_ddp", rt=RT, model=code(owner))))


def unwrapped_callee(model: cst.CSTNode) -> cst.CSTNode:
    """``gen`` of ``gen(x)`` → ``ddpify.unwrap(gen)``: the forward runs on the plain module."""
    assert isinstance(model, cst.BaseExpression)
    return unwrapped(model)


def unwrapped_state_dict(call: cst.Call) -> cst.Call:
    """``model.state_dict()`` → ``ddpify.unwrap(model).state_dict()``: no ``module.`` keys."""
    func = call.func
    assert isinstance(func, cst.Attribute)
    return call.with_changes(func=func.with_changes(value=unwrapped(func.value)))


def unwrapped_load_state_dict(call: cst.Call) -> cst.Call:
    """``model.load_state_dict(sd)`` → ``ddpify.load_state_dict(model, sd)``."""
    func = call.func
    assert isinstance(func, cst.Attribute)
    return cst.Call(func=snippets.expression("load_state_dict", rt=RT), args=fix_commas([cst.Arg(func.value), *call.args]))


# ---------------------------------------------------------------- device
def cuda_to_device(call: cst.Call) -> cst.Call:
    """``x.cuda()`` / ``x.cuda(0, non_blocking=True)`` → ``x.to(ddpify.device(), ...)``."""
    func = call.func
    assert isinstance(func, cst.Attribute)
    keep = [a for a in call.args if a.keyword is not None and a.keyword.value == "non_blocking"]
    return call.with_changes(func=func.with_changes(attr=cst.Name("to")), args=fix_commas([cst.Arg(device()), *keep]))


def device_name() -> cst.BaseExpression:
    return snippets.expression("device_name", rt=RT)


def device_value(
    value: cst.BaseExpression, *, allow_int: bool, is_torch_device: Callable[[cst.Call], bool], text: bool = False
) -> cst.BaseExpression:
    """``"cuda"``, ``"cuda:0"``, ``0`` (also inside ``a if c else b`` or ``torch.device(...)``)
    → ``ddpify.device()``; with ``text`` (a device variable) a string stays a string,
    ``ddpify.device_name()``, which the script's own string tests (``"cuda" in device``) still
    read. Anything else comes back as the same object."""
    if is_cuda_literal(value, allow_int=allow_int):
        return device_name() if text and not isinstance(value, cst.Integer) else device()
    if isinstance(value, cst.IfExp):
        body = device_value(value.body, allow_int=allow_int, is_torch_device=is_torch_device, text=text)
        orelse = device_value(value.orelse, allow_int=allow_int, is_torch_device=is_torch_device, text=text)
        if body is not value.body or orelse is not value.orelse:
            return value.with_changes(body=body, orelse=orelse)
    if isinstance(value, cst.Call) and len(value.args) == 1 and is_torch_device(value):
        if is_cuda_literal(value.args[0].value, allow_int=allow_int):
            return device()
    return value


# ---------------------------------------------------------------- seeds, checkpoints, output
def seeded(call: cst.Call) -> cst.Call:
    """``torch.manual_seed(s)`` → ``ddpify.seed(torch.manual_seed, s)``."""
    return cst.Call(func=snippets.expression("seed", rt=RT), args=fix_commas([cst.Arg(call.func), *call.args]))


def rank_zero_save(call: cst.Call, *, wait: bool = True) -> cst.Call:
    """``torch.save(...)`` → ``ddpify.save(...)``: rank 0 writes, everyone waits; with
    ``wait=False`` (``ddpify.save(..., wait=False)``) nobody waits: a save under a condition
    the ranks may decide differently, where a barrier would hang the ranks inside it."""
    saved = call.with_changes(func=snippets.expression("save", rt=RT))
    if wait or has_keyword(call, "wait"):
        return saved
    return saved.with_changes(args=appended(call, keyword("wait", snippets.expression("no_wait"))))


def with_map_location(call: cst.Call) -> cst.Call | None:
    """``torch.load(p)`` (also ``torch.load(p, weights_only=False)``) → ``torch.load(p, ...,
    map_location=ddpify.device())``; None if not possible."""
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) >= 2 or has_keyword(call, "map_location") or any(a.star for a in call.args):  # (f, map_location, ...)
        return None
    location = keyword("map_location", snippets.expression("map_location", rt=RT))
    return call.with_changes(args=appended(call, location))


def rank_zero_print(call: cst.Call) -> cst.Call:
    return call.with_changes(func=snippets.expression("print", rt=RT))


def quiet_progress_bar(call: cst.Call) -> cst.Call | None:
    """``tqdm(...)`` shown on rank 0 only; None if it already is."""
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "disable":
            if "is_main_process" in code(arg.value):
                return None
            flag = code(arg.value) if is_simple_reference(arg.value) else f"({code(arg.value)})"
            args[index] = arg.with_changes(value=snippets.expression("tqdm_disable_combined", rt=RT, original=flag))
            break
    else:
        args.append(keyword("disable", snippets.expression("tqdm_disable", rt=RT)))
    return call.with_changes(args=fix_commas(args))


def agreed(test: cst.CSTNode) -> cst.CSTNode:
    """``os.path.exists(d)`` → ``ddpify.agreed(os.path.exists(d))``: rank 0's answer on every rank."""
    assert isinstance(test, cst.BaseExpression)
    return snippets.expression("agreed", rt=RT, test=code(test))


def any_rank(test: cst.CSTNode) -> cst.CSTNode:
    """``bad >= patience`` → ``ddpify.any_rank(bad >= patience)``: true on every rank once true on one."""
    assert isinstance(test, cst.BaseExpression)
    return snippets.expression("any_rank", rt=RT, test=code(test))


def all_ranks(test: cst.CSTNode) -> cst.CSTNode:
    """``time.time() - t0 < budget`` → ``ddpify.all_ranks(...)``: true on every rank while true on all."""
    assert isinstance(test, cst.BaseExpression)
    return snippets.expression("all_ranks", rt=RT, test=code(test))


def rank_zero_factory(call: cst.Call) -> cst.Call:
    """``SummaryWriter(...)`` → ``ddpify.rank_zero(SummaryWriter)(...)``."""
    return call.with_changes(func=snippets.expression("rank_zero", rt=RT, factory=code(call.func)))


def local_rank_argument(call: cst.Call) -> cst.Call | None:
    """``add_argument("--local_rank", default=-1)`` → both spellings and a launcher-aware
    default; None when there is nothing to change."""
    flags = [a for a in call.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
    spelled = {a.value.evaluated_value for a in flags if isinstance(a.value, cst.SimpleString)}
    if not spelled & set(LOCAL_RANK_FLAGS):
        return None
    args = list(call.args)
    missing = [f for f in LOCAL_RANK_FLAGS if f not in spelled]
    insert_at = max(args.index(a) for a in flags) + 1
    for flag in missing:
        args.insert(insert_at, cst.Arg(cst.SimpleString(f'"{flag}"')))
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "default":
            if "local_rank_argument" in code(arg.value):
                return call.with_changes(args=fix_commas(args)) if missing else None
            args[index] = arg.with_changes(value=snippets.expression("local_rank_default", rt=RT, original=code(arg.value)))
            break
    else:
        args.append(keyword("default", snippets.expression("local_rank_default", rt=RT, original="None")))
    return call.with_changes(args=fix_commas(args))


def downloaded_once(statement: cst.SimpleStatementLine) -> cst.With:
    """``data = MNIST(root, download=True)`` → the same under ``with ddpify.main_process_first():``
    so rank 0 downloads and the others then read the finished files."""
    block = snippets.statement("main_process_first", rt=RT)
    assert isinstance(block, cst.With) and isinstance(block.body, cst.IndentedBlock)
    return block.with_changes(
        leading_lines=cstutil.leading_lines(statement),
        body=block.body.with_changes(body=[statement.with_changes(leading_lines=())]),
    )


def main_process_only(statement: cst.BaseStatement) -> cst.If:
    """``save_image(...)`` → the same under ``if ddpify.is_main_process():``: one process writes
    the file (or the terminal line) that the single-GPU script wrote once."""
    guard = snippets.statement("main_process_only", rt=RT)
    assert isinstance(guard, cst.If) and isinstance(guard.body, cst.IndentedBlock)
    return guard.with_changes(
        leading_lines=cstutil.leading_lines(statement),
        body=guard.body.with_changes(body=[statement.with_changes(leading_lines=())]),
    )


def synced_accumulation(loop: cst.For, model: str, when: str) -> cst.For:
    """Gradient accumulation: the loop body runs under ``ddpify.sync_gradients(model, when=...)``,
    ``when`` being the test that decides the optimizer step, so the other micro-batches skip
    DDP's all-reduce (``no_sync``)."""
    assert isinstance(loop.body, cst.IndentedBlock)
    block = snippets.statement("sync_gradients", rt=RT, model=model, when=when)
    assert isinstance(block, cst.With) and isinstance(block.body, cst.IndentedBlock)
    inner = block.with_changes(body=block.body.with_changes(body=loop.body.body))
    return loop.with_changes(body=loop.body.with_changes(body=[inner]))


def main_process_guard(guard: cst.If, parts: Sequence[tuple[str, ...]]) -> cst.If:
    """``if args.local_rank in [-1, 0]:`` → ``if ddpify.is_main_process():`` — the global rank,
    so a multi-node run saves and logs once, not once per node. ``parts`` are the paths to the
    local-rank tests within the test (``RankTests.local_main_parts``); the rest stays."""
    return guard.with_changes(test=main_process_parts(guard.test, parts))


def main_process_parts(test: cst.BaseExpression, parts: Sequence[tuple[str, ...]], replacement: str | None = None) -> cst.BaseExpression:
    """``args.local_rank in [-1, 0] and step % 10 == 0`` → ``ddpify.is_main_process() and
    step % 10 == 0``: each part at a path (``("left",)``) becomes the global-rank test, or
    ``replacement`` (a linter fix's plain-PyTorch test, parenthesised inside a larger
    expression); the rest stays."""
    if () in parts:
        new = main_process_test() if replacement is None else cst.parse_expression(replacement)
        return new.with_changes(lpar=test.lpar, rpar=test.rpar) if test.lpar else new
    changes: dict[str, cst.BaseExpression] = {}
    for field in ("left", "right", "expression"):
        inner = [path[1:] for path in parts if path and path[0] == field]
        if inner:
            part = getattr(test, field)
            if () in inner and replacement is not None and " or " in replacement and not part.lpar:
                changes[field] = cst.parse_expression(f"({replacement})")
            else:
                changes[field] = main_process_parts(part, inner, replacement)
    return test.with_changes(**changes)


def main_process_test() -> cst.BaseExpression:
    """``ddpify.is_main_process()``: true on global rank 0 only."""
    return snippets.expression("main_process_test", rt=RT)


def unsharded(loader: cst.BaseExpression) -> cst.BaseExpression:
    """A training loader handed to evaluation code → ``ddpify.unsharded(loader)``: the metric
    then covers the whole dataset on every rank instead of this rank's shard."""
    return snippets.expression("unsharded", rt=RT, loader=code(loader))


def makedirs_exist_ok(call: cst.Call) -> cst.Call | None:
    """``os.mkdir(d)`` / ``os.makedirs(d)`` → ``os.makedirs(d, exist_ok=True)``: every rank runs
    the ``if not os.path.isdir(d): os.mkdir(d)`` idiom at once, and all but the first would
    crash with FileExistsError. None when ``exist_ok`` is already given."""
    if has_keyword(call, "exist_ok") or len(call.args) >= 3 or any(a.star for a in call.args):
        return None
    func = call.func
    if isinstance(func, cst.Name) and func.value == "mkdir":
        return None  # `from os import mkdir`: no makedirs in scope to switch to
    if isinstance(func, cst.Attribute) and func.attr.value == "mkdir":
        func = func.with_changes(attr=cst.Name("makedirs"))
    return call.with_changes(func=func, args=appended(call, keyword("exist_ok", cst.Name("True"))))

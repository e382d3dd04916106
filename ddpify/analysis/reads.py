"""What an expression reads and what an assignment binds, as ``ddpify.analysis.divergence``
follows values: calls that read the clock or draw random numbers, the outermost references,
what a collective returns (the same on every rank), shapes (alike on every rank's shard), and
the targets of assignments and loops."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code, is_simple_reference

CLOCK = frozenset(
    "time.time time.time_ns time.perf_counter time.perf_counter_ns time.monotonic time.monotonic_ns time.process_time "
    "time.localtime time.gmtime time.ctime time.strftime timeit.default_timer datetime.datetime.now "
    "datetime.datetime.today datetime.datetime.utcnow datetime.date.today".split()
)
TORCH_RANDOM = frozenset("rand randn randint randperm rand_like randn_like randint_like multinomial bernoulli normal poisson".split())
# in-place samplers of a tensor, whatever its name
RANDOM_METHODS = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_"})
# objects and seeds, not draws
NOT_DRAWS = frozenset(
    {"seed", "getstate", "setstate", "default_rng", "RandomState", "Generator", "SeedSequence", "Random", "get_state", "set_state"}
)
# the value a call returns is the same on every rank whatever its arguments
COLLECTIVES = frozenset({"all_reduce", "all_gather", "all_gather_object", "broadcast", "broadcast_object_list", "all_gather_into_tensor"})
REDUCING_HELPER = re.compile(r"reduce|gather|broadcast|sync|all_mean|across", re.I)
# ddpify's runtime functions whose value is the same on every rank (a converted decision)
AGREED = frozenset({"ddpify.runtime.agreed", "ddpify.runtime.any_rank", "ddpify.runtime.all_ranks"})
# `losses.append(loss.item())`: the receiver takes the argument
MUTATORS = frozenset({"append", "extend", "add", "update", "insert", "appendleft", "push", "put", "add_", "copy_"})
SHAPE_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "device", "is_cuda"})
SHAPE_METHODS = frozenset({"size", "dim", "numel", "ndimension", "type"})


def draws(qualified: str) -> bool:
    """``torch.randint``, ``random.random``, ``numpy.random.choice``...: draws from a global RNG."""
    head, _, last = qualified.rpartition(".")
    if last in NOT_DRAWS:
        return False
    if head == "torch":
        return last in TORCH_RANDOM
    return head in ("random", "numpy.random")


def parts(expression: cst.CSTNode, source: Source) -> Iterator[cst.BaseExpression]:
    """The calls and outermost references in ``expression``, in order, skipping what a
    collective or a reducing helper returns (the same on every rank), lambdas, attribute names
    and keywords."""
    if isinstance(expression, cst.Lambda) or shape(expression):
        return
    if isinstance(expression, cst.Call):
        name = (
            expression.func.attr.value
            if isinstance(expression.func, cst.Attribute)
            else expression.func.value
            if isinstance(expression.func, cst.Name)
            else ""
        )
        qualified = source.qualified(expression)
        if (
            any(q.startswith("torch.distributed.") for q in qualified)
            or name in COLLECTIVES
            or REDUCING_HELPER.search(name)
            or qualified & AGREED
        ):
            return
        yield expression
    if is_simple_reference(expression):
        yield expression  # type: ignore[misc]
        if isinstance(expression, cst.Attribute):
            yield from parts(expression.value, source)
        return
    for child in expression.children:
        if isinstance(child, cst.Arg):
            yield from parts(child.value, source)
        elif isinstance(child, cst.Name) and child is getattr(expression, "attr", None):
            continue  # `.item` of `f(x).item`
        else:
            yield from parts(child, source)


def shape(expression: cst.CSTNode) -> bool:
    """``x.shape``, ``x.size(0)``, ``len(batch)``, ``x.dtype``: every rank's shard yields batches
    of the same shapes (samplers pad the shards to one length), whatever their values; and
    ``batch is not None`` (a prefetcher's end of data) comes at the same step on every rank."""
    if isinstance(expression, cst.Comparison):
        return all(isinstance(c.operator, (cst.Is, cst.IsNot)) and _none(c.comparator) for c in expression.comparisons)
    if isinstance(expression, cst.Attribute):
        return expression.attr.value in SHAPE_ATTRIBUTES
    if isinstance(expression, cst.Call):
        func = expression.func
        return isinstance(func, cst.Attribute) and func.attr.value in SHAPE_METHODS or isinstance(func, cst.Name) and func.value == "len"
    return False


def _none(expression: cst.BaseExpression) -> bool:
    return isinstance(expression, cst.Name) and expression.value == "None"


def paired(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``a, b = f(x), g(y)``: ``a`` takes ``f(x)`` only; other targets take the whole value."""
    if (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
        and not any(isinstance(e, cst.StarredElement) for e in [*target.elements, *value.elements])
    ):
        return [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]
    return [(target, value)]


def targets(target: cst.BaseExpression) -> list[str]:
    """The references a target binds: ``x``, ``self.best``, each element of a tuple;
    ``hist[k]`` binds (part of) ``hist``."""
    if is_simple_reference(target):
        return [code(target)]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in targets(element.value)]
    if isinstance(target, cst.StarredElement):
        return targets(target.value)
    if isinstance(target, cst.Subscript) and is_simple_reference(target.value):
        return [code(target.value)]
    return []


def loop_items(loop: cst.For) -> list[cst.BaseExpression]:
    """The targets that take a loop's items: all of them, except the counter of
    ``enumerate(...)``, which runs alike on every rank while the items differ."""
    iterable = loop.iter
    if (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value == "enumerate"
        and isinstance(loop.target, (cst.Tuple, cst.List))
        and len(loop.target.elements) == 2
    ):
        return [loop.target.elements[1].value]
    return [loop.target]


def exits(suite: cst.BaseSuite) -> bool:
    body = suite.body
    if isinstance(suite, cst.IndentedBlock):
        if not body or not isinstance(body[-1], cst.SimpleStatementLine):
            return False
        body = body[-1].body
    return bool(body) and isinstance(body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))


def short(node: cst.CSTNode, limit: int = 60) -> str:
    text = " ".join(code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _clauses(comprehension: cst.CSTNode) -> Iterator[cst.CompFor]:
    clause: cst.CompFor | None = comprehension.for_in  # type: ignore[attr-defined]
    while clause is not None:
        yield clause
        clause = clause.inner_for_in


def binding_comprehension(source: Source, node: cst.CSTNode) -> cst.CSTNode | None:
    """The comprehension around ``node`` whose ``for`` binds its root name (Python 3 keeps
    such names inside it), else None."""
    root = code(node).split(".", 1)[0]
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(ancestor, COMPREHENSIONS) and any(root in targets(c.target) for c in _clauses(ancestor)):
            return ancestor
    return None


def comprehension_bindings(source: Source) -> Iterator[tuple[cst.CSTNode, str, cst.BaseExpression]]:
    """(comprehension, name, what its ``for`` iterates) for every name a comprehension binds."""
    for comprehension in source.of_types(*COMPREHENSIONS):
        for clause in _clauses(comprehension):
            for name in targets(clause.target):
                yield comprehension, name, clause.iter


def loop_bindings(source: Source) -> Iterator[tuple[cst.For, str, cst.BaseExpression]]:
    """(loop, name, what it iterates) for every name a ``for`` loop's items bind."""
    for loop in source.of_types(cst.For):
        assert isinstance(loop, cst.For)
        for name in {n for t in loop_items(loop) for n in targets(t)}:
            yield loop, name, loop.iter


def argument_slots(call: cst.Call) -> Iterator[tuple[str, cst.Arg]]:
    """Each argument of ``call`` with the slot it fills: its position, or its keyword (up to a
    starred one, whose slots are unknown)."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return
        yield (arg.keyword.value if arg.keyword is not None else str(index)), arg

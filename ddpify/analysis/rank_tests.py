"""Which processes an expression selects: the one definition of "is this a rank test".

A test's answer is a ``Ranks`` (``ddpify.analysis.ranks``): the classes of process (the single
process, global rank 0, the other nodes' local rank 0, the rest) where it may / must be true,
so ``not args.distributed or rank == 0`` is "the single process or global rank 0"
(``RankSelection.MAIN``), and an early exit ``if rank != 0: return`` leaves the classes where
the test must be false.

What counts, decided from the expression's structure and qualified names first, this file's own
assignments and functions next, and names only as a last resort:

- rank numbers: ``dist.get_rank()``, ``ddpify.rank()``, ``os.environ["RANK"]`` / ``.get`` / ``os.getenv``
  (also SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK), a name or attribute called ``rank`` / ``global_rank`` /
  ``ddp_rank`` / ``process_index``; local rank numbers: ``LOCAL_RANK`` (SLURM_LOCALID,
  OMPI_COMM_WORLD_LOCAL_RANK), ``local_rank``, ``local_process_index``, ``rank % ngpus_per_node``, the first
  parameter of an ``mp.spawn`` target unless it is named like a global rank, and ``gpu`` / ``gpu_id`` in scripts
  that manage processes themselves (``torch.distributed`` / ``torch.multiprocessing``); node ranks (``NODE_RANK``,
  ``node_rank``) and world sizes (``WORLD_SIZE``, ``dist.get_world_size()``, ``world_size``, ``num_processes``);
- flags: ``is_main_process`` / ``is_master`` / ``master_process`` / ``is_global_zero`` /
  ``is_primary`` (main), ``is_local_main_process`` / ``is_local_master`` (once per node),
  ``dist.is_initialized()``, ``args.distributed``, ``ddp``, ``"RANK" in os.environ`` (distributed);
- an optional object tested for None or truth, made on some ranks only (``ddpify.analysis.presence``);
- a variable assigned such a test (``master_process = ddp_rank == 0`` in one branch and ``True`` in the other),
  a parameter every call passes one (``pbar=(rank == 0)``: ``ddpify.analysis.parameter_flags``), and a function of
  this file whose returns are such tests or numbers (``def is_main_process(): return get_rank() == 0``;
  ``is_master(args, local=False)`` read at its default).

A comparison of a rank number with constants (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``,
chained) is evaluated per class; in the single process a rank reads as the ``.get`` default, else as -1 when the
test mentions -1 (the ``--local_rank -1`` convention), else 0.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import cast

import libcst as cst

from ddpify.analysis.flag_defaults import by_default, literal_defaults, passes, skipped_by_default
from ddpify.analysis.flag_setters import cleared_later, flags_set_by_calls, inherited_flags
from ddpify.analysis.parameter_flags import passed_flag
from ddpify.analysis.presence import Presence
from ddpify.analysis.ranks import (
    API_FLAGS,
    API_NUMBERS,
    CASTS,
    CLASSES,
    DEVICE_INDEX,
    ENVIRONMENT,
    EVERY,
    FLAGS,
    GLOBAL_NAME,
    NAMED_FLAGS,
    NAMED_NUMBERS,
    NOWHERE,
    PROCESS_MODULES,
    RANK_TERMS,
    UNKNOWN,
    Number,
    Ranks,
    RankSelection,
    Term,
    constant,
    constants_of,
    evaluate,
    flipped,
    last_name,
)
from ddpify.analysis.source import Source
from ddpify.analysis.spellings import subscript_key
from ddpify.tree.cstutil import code, is_simple_reference


class RankTests:
    """Rank tests and rank numbers of one file, each expression judged once (cached).

    ``where(node)`` is the execution context of a statement within its function (supplied by
    ``ddpify.analysis.context``), used to weigh the assignments of a flag and the returns of a
    function: ``master_process = True`` in the single-process branch means "main" there."""

    def __init__(self, source: Source, where: Callable[[cst.CSTNode], Ranks] | None = None) -> None:
        self.source = source
        self.where = where or (lambda node: EVERY)
        self._ranks: dict[cst.CSTNode, Ranks] = {}
        self._numbers: dict[cst.CSTNode, Number | None] = {}
        self._flags: dict[cst.CSTNode, Ranks | None] = {}
        self._per_rank: dict[str, bool] = {}
        self._judged: dict[tuple[object, str], object] = {}  # functions' returns and variables' values, judged once
        self._busy: set[object] = set()
        self.defaults_read: dict[cst.FunctionDef, frozenset[tuple[int, str]]] = {}  # mode parameters read at their default

    # ---------------------------------------------------------------- public
    def ranks(self, test: cst.BaseExpression) -> Ranks:
        """Where ``test`` may / must be true."""
        found = self._ranks.get(test)
        if found is None:
            found = self._condition(test)
            self._ranks[test] = found
        return found

    def selection(self, test: cst.BaseExpression) -> RankSelection:
        return self.ranks(test).selection

    def is_rank_test(self, test: cst.BaseExpression) -> bool:
        """A test that lets some ranks through and not others."""
        return self.selection(test).rank_dependent

    def local_main_parts(self, test: cst.BaseExpression) -> list[tuple[str, ...]]:
        """Where ``test`` asks "local rank 0?" in place of "rank 0?": the paths (through
        ``and`` / ``or`` / ``not``: ``("left",)``) to its parts that are exactly local-main
        tests, when the whole test lets once-per-node through; ``[()]`` for the whole test.
        Replacing those parts by a global-rank test keeps the rest (``and epoch % 5 == 0``)."""
        if self.selection(test) is not RankSelection.LOCAL_MAIN:
            return []
        return self._local_main_parts(test, ())

    def _local_main_parts(self, node: cst.BaseExpression, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        ranks = self.ranks(node)
        if ranks.selection is RankSelection.LOCAL_MAIN and ranks.may == ranks.must:
            return [path]
        if isinstance(node, cst.BooleanOperation):
            return [*self._local_main_parts(node.left, (*path, "left")), *self._local_main_parts(node.right, (*path, "right"))]
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return self._local_main_parts(node.expression, (*path, "expression"))
        return []

    def term(self, node: cst.BaseExpression) -> Term | None:
        """The rank number or world size ``node`` reads, if any."""
        number = self.number(node)
        return number.term if number is not None else None

    def depends_on_rank(self, expression: cst.BaseExpression) -> bool:
        """Whether ``expression`` (or a part of it) differs between ranks: a rank number, a
        main-process flag, a rank test (``seed + dist.get_rank()``, ``f"[GPU{rank}]"``), or a
        variable assigned one (``seed = args.seed + rank; torch.manual_seed(seed)``)."""
        return self._mentions_rank(expression, follow=True)

    def _mentions_rank(self, expression: cst.BaseExpression, *, follow: bool) -> bool:
        for node in self.source.of_types_in(expression, cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BinaryOperation):
            assert isinstance(node, cst.BaseExpression)
            if self.term(node) in RANK_TERMS:
                return True
            flag = self.flag(node)
            if flag is not None and flag.selection.rank_dependent:
                return True
            if follow and is_simple_reference(node) and self._assigned_per_rank(code(node)):
                return True
        return False

    def _assigned_per_rank(self, target: str) -> bool:
        """A variable computed from a rank (``seed = args.seed + rank``, ``tag = f"[GPU{gpu}]"``):
        one step only, and not through other calls (``model = DDP(model, device_ids=[rank])``
        is no per-rank value)."""
        found = self._per_rank.get(target)
        if found is None:
            values = [v for _, v in self.source.assignments.get(target, []) if v is not None]
            found = any(self._mentions_rank(v, follow=False) for v in values if not self._opaque_call(v))
            self._per_rank[target] = found
        return found

    def _opaque_call(self, value: cst.BaseExpression) -> bool:
        """A call whose result is something else than its arguments (not ``int(...)``, ``str.format``,
        ``torch.device("cuda:" + str(rank))``: a rank's own device is a per-rank value)."""
        if not isinstance(value, cst.Call):
            return False
        return not self.source.qualified(value) & (CASTS | {"torch.device"}) and last_name(value) != "format"

    @functools.cached_property
    def presence(self) -> Presence:
        """Where the file's optional objects exist (``ddpify.analysis.presence``)."""
        return Presence(self.source, self.ranks, self.where)

    @functools.cached_property
    def manages_processes(self) -> bool:
        """Whether the script starts or joins processes itself (imports torch.distributed,
        torch.multiprocessing or DDP, or spawns workers): only then is ``gpu`` the local rank."""
        if self.source.spawned or "init_process_group" in self.source.calls_by_callee:
            return True
        imported = [code(a.name) for node in self.source.of_types(cst.Import) for a in node.names]
        imported += [code(n.module) for n in self.source.of_types(cst.ImportFrom) if n.module is not None and not n.relative]
        return any(m.startswith(PROCESS_MODULES) for m in imported)

    # ---------------------------------------------------------------- conditions
    def _condition(self, node: cst.BaseExpression) -> Ranks:
        if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
            return EVERY if node.value == "True" else NOWHERE
        if self.source.names_function(node):
            return EVERY  # `if is_main_process:` without the call: a function object is always true
        fixed = constant(node)
        if fixed is not None:
            return EVERY if fixed else NOWHERE
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return ~self.ranks(node.expression)
        if isinstance(node, cst.BooleanOperation):
            first, second = self.ranks(node.left), self.ranks(node.right)
            return first & second if isinstance(node.operator, cst.And) else first | second
        if isinstance(node, cst.Comparison):
            result = EVERY
            left = node.left
            for target in node.comparisons:  # 0 <= rank < 1: each pair must hold
                result = result & self._pair(left, target.operator, target.comparator)
                left = target.comparator
            return result
        if isinstance(node, cst.IfExp):
            test = self.ranks(node.test)
            return (test & self.ranks(node.body)) | (~test & self.ranks(node.orelse))
        flag = self.flag(node)
        if flag is not None:
            return flag
        number = self.number(node)
        if number is not None:
            return evaluate(number, cst.NotEqual(), [0])
        present = self.presence.of(node)  # `if writer:` of `writer = SummaryWriter() if rank == 0 else None`
        return present if present is not None else UNKNOWN

    def _pair(self, left: cst.BaseExpression, operator: cst.BaseCompOp, right: cst.BaseExpression) -> Ranks:
        if isinstance(operator, cst.In) and isinstance(left, cst.SimpleString) and self._is_environ(right):
            return FLAGS["distributed"] if left.evaluated_value in ENVIRONMENT else UNKNOWN  # "RANK" in os.environ
        for this, other, op in ((left, right, operator), (right, left, flipped(operator))):
            if op is None:
                continue
            constants = constants_of(other)
            if constants is None or (len(constants) != 1 and not isinstance(op, (cst.In, cst.NotIn))):
                continue
            number = self.number(this)
            if number is not None:
                return evaluate(number, op, constants)
        if isinstance(operator, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot)) and isinstance(right, cst.Name) and right.value == "None":
            present = self.presence.of(left)  # `if self.logger is not None:` of a rank-0-only logger
            if present is not None:
                return ~present if isinstance(operator, (cst.Equal, cst.Is)) else present
        if (
            isinstance(operator, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot))
            and isinstance(right, cst.Name)
            and right.value in ("True", "False")
        ):
            flag = self.flag(left)
            if flag is not None:
                positive = isinstance(operator, (cst.Equal, cst.Is)) == (right.value == "True")
                return flag if positive else ~flag
        return UNKNOWN

    # ---------------------------------------------------------------- flags
    def flag(self, node: cst.BaseExpression) -> Ranks | None:
        """Where a boolean reference (``accelerator.is_main_process``, ``is_master``,
        ``args.distributed``, ``is_main_process()``) is true; None if it is no such flag."""
        if node in self._flags:
            return self._flags[node]
        found = self._flag(node)
        self._flags[node] = found
        return found

    def _flag(self, node: cst.BaseExpression) -> Ranks | None:
        if self.source.names_function(node):
            return None
        qualified = self.source.qualified(node) if isinstance(node, (cst.Call, cst.Name, cst.Attribute)) else set()
        for name in qualified:
            if name in API_FLAGS:
                return FLAGS[API_FLAGS[name]]
        if isinstance(node, cst.Call):
            returned = self._returned(node, self._returned_flag)  # read at their mode's default: a call passing it is named
            own = self.source.functions_called(node, own_methods_only=True)
            if returned is not None and not any(passes(node, self.defaults_read.get(f, frozenset())) for f in own):
                return returned
            helper = self.source.project.helper(node)
            if helper is not None and helper.flag is not None and not passes(node, helper.flag_defaults):
                return helper.flag
        elif is_simple_reference(node):
            assigned = self._assigned_flag(code(node))
            passed = assigned if assigned is not None else passed_flag(self.source, node, self.where, self.combine, self._busy, self.ranks)
            if passed is not None:
                return passed
        else:
            return None
        last = last_name(node)
        for pattern, flag in NAMED_FLAGS:
            if last is not None and pattern.match(last):
                return FLAGS[flag]
        return None

    def _assigned_flag(self, target: str) -> Ranks | None:
        """A variable assigned rank tests (weighed by where each assignment runs)."""
        key = ("flag", target)
        if key not in self._judged:
            found = self._assigned_flag_uncached(target)
            if target in self._busy:
                return found
            self._judged[key] = found
        return self._judged[key]  # type: ignore[return-value]

    def _assigned_flag_uncached(self, target: str) -> Ranks | None:
        bindings = self.source.assignments.get(target)
        if not bindings or target in self._busy:
            return None if bindings else self._set_by_calls.get(target)
        self._busy.add(target)
        try:
            weighed = [(self.where(statement), value) for statement, value in bindings]
            return self.combine(cleared_later(self.source, bindings, weighed))
        finally:
            self._busy.discard(target)

    def _returned_flag(self, function: cst.FunctionDef) -> Ranks | None:
        """Read with its mode parameters at their defaults (``ddpify.analysis.flag_defaults``)."""
        defaults, used = literal_defaults(function, method=self.source.is_method(function)), set[tuple[int, str]]()
        kept = [r for r in self._returns(function) if not skipped_by_default(self.source, r, function, defaults, used)]
        returns = [(self.where(r), by_default(r.value, defaults, used) if r.value is not None else None) for r in kept]
        self.defaults_read[function] = frozenset(used)
        return self.combine(returns)

    @functools.cached_property
    def _set_by_calls(self) -> dict[str, Ranks]:
        """Flags this file reads and never assigns: set by the project helpers it calls, or by
        its classes' project base classes (``self.verbose``)."""
        return {**inherited_flags(self.source), **flags_set_by_calls(self.source)}

    def combine(self, weighed: list[tuple[Ranks, cst.BaseExpression | None]]) -> Ranks | None:
        """Values that each hold where their statement runs -> where the variable is true; None
        unless a value is a rank test or ``True`` / ``False`` under one (a plain bool is no flag)."""
        relevant = False
        may = must = covered = 0
        for context, value in weighed:
            ranks = UNKNOWN if value is None else self.ranks(value)
            fixed = isinstance(value, cst.Name) and value.value in ("True", "False")
            relevant = relevant or ranks.depends_on_process or (fixed and context.depends_on_process)
            may |= context.may & ranks.may
            covered |= context.may
        if not relevant:
            return None
        for klass in CLASSES:
            runs = [self.ranks(v) if v is not None else UNKNOWN for c, v in weighed if c.may & klass]
            if runs and all(r.must & klass for r in runs):
                must |= klass
        return Ranks(may, must & covered)

    # ---------------------------------------------------------------- numbers
    def number(self, node: cst.BaseExpression) -> Number | None:
        """The rank number (or world size) ``node`` reads, with its single-process value."""
        if node not in self._numbers:
            self._numbers[node] = self._number(node)
        return self._numbers[node]

    def _number(self, node: cst.BaseExpression) -> Number | None:
        if isinstance(node, cst.Call) and self.source.qualified(node) & CASTS and len(node.args) == 1:
            return self.number(node.args[0].value)  # int(os.environ["RANK"])
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Modulo):
                left = self.number(node.left)
                if left is not None and left.term is Term.GLOBAL_RANK:
                    return Number(Term.LOCAL_RANK, left.solo)  # rank % ngpus_per_node
            return None
        environment = self._environment(node)
        if environment is not None:
            return environment
        if isinstance(node, cst.Call):
            for name in self.source.qualified(node):
                if name in API_NUMBERS:
                    return Number(API_NUMBERS[name])
            returned = self._returned(node, self._returned_number)
            if returned is not None:
                return returned
            helper = self.source.project.helper(node)
            if helper is not None and helper.number is not None:
                return helper.number
        elif is_simple_reference(node):
            spawned = self._spawn_index(node)
            if spawned is not None:
                return spawned
            assigned = self._assigned_number(code(node))
            if assigned is not None:
                return assigned
        elif isinstance(node, cst.Subscript):  # opt["global_rank"]: an options dict keyed by the rank's name
            key = subscript_key(node)
            return next((Number(term) for pattern, term in NAMED_NUMBERS if isinstance(key, str) and pattern.match(key)), None)
        else:
            return None
        last = last_name(node)
        if last is None:
            return None
        for pattern, term in NAMED_NUMBERS:
            if pattern.match(last):
                return Number(term)
        if DEVICE_INDEX.match(last) and not isinstance(node, cst.Call) and self.manages_processes:
            return Number(Term.LOCAL_RANK)
        return None

    def _environment(self, node: cst.BaseExpression) -> Number | None:
        """``os.environ["RANK"]``, ``os.environ.get("LOCAL_RANK", -1)``, ``os.getenv("RANK")``."""
        key: cst.BaseExpression | None = None
        default: cst.BaseExpression | None = None
        if isinstance(node, cst.Subscript) and self._is_environ(node.value) and len(node.slice) == 1:
            index = node.slice[0].slice
            key = index.value if isinstance(index, cst.Index) else None
        elif isinstance(node, cst.Call) and node.args and self.source.qualified(node) & {"os.environ.get", "os.getenv"}:
            key = node.args[0].value
            default = node.args[1].value if len(node.args) > 1 else None
        if not isinstance(key, cst.SimpleString) or key.evaluated_value not in ENVIRONMENT:
            return None
        return Number(ENVIRONMENT[str(key.evaluated_value)], constant(default) if default is not None else None)

    def _is_environ(self, node: cst.BaseExpression) -> bool:
        return "os.environ" in self.source.qualified(node) if isinstance(node, (cst.Name, cst.Attribute)) else False

    def _assigned_number(self, target: str) -> Number | None:
        """A variable assigned rank numbers (constants such as ``-1`` give the single process's
        value); None when some value is something else."""
        key = ("number", target)
        if key not in self._judged:
            found = self._assigned_number_uncached(target)
            if target in self._busy:
                return found
            self._judged[key] = found
        return self._judged[key]  # type: ignore[return-value]

    def _assigned_number_uncached(self, target: str) -> Number | None:
        bindings = self.source.assignments.get(target)
        if not bindings or target in self._busy:
            return None
        self._busy.add(target)
        try:
            terms: set[Term] = set()
            solos: set[int] = set()
            for _, value in bindings:
                fixed = constant(value) if value is not None else None
                if fixed is not None:
                    solos.add(fixed)
                    continue
                number = self.number(value) if value is not None else None
                if number is None:
                    return None
                terms.add(number.term)
                if number.solo is not None:
                    solos.add(number.solo)
            if len(terms) != 1:
                return None
            return Number(terms.pop(), solos.pop() if len(solos) == 1 else None)
        finally:
            self._busy.discard(target)

    def _spawn_index(self, node: cst.BaseExpression) -> Number | None:
        """The first parameter of an ``mp.spawn`` target (after ``self`` for a started method):
        the process's index on this node."""
        if not isinstance(node, cst.Name) or not self.source.spawned:
            return None
        function = self.source.enclosing_function(node)
        while function is not None:
            params = function.params.params[1 if self.source.is_method(function) else 0 :]  # a started method's self is no index
            if function in self.source.spawned and params and params[0].name.value == node.value:
                return Number(Term.GLOBAL_RANK if GLOBAL_NAME.match(node.value) else Term.LOCAL_RANK)
            function = self.source.enclosing_function(function)
        return None

    def _returned_number(self, function: cst.FunctionDef) -> Number | None:
        terms: set[Term] = set()
        for ret in self._returns(function):
            if ret.value is None or constant(ret.value) is not None:
                continue
            number = self.number(ret.value)
            if number is None:
                return None
            terms.add(number.term)
        return Number(terms.pop()) if len(terms) == 1 else None

    # ---------------------------------------------------------------- this file's functions
    def function_flag(self, function: cst.FunctionDef) -> Ranks | None:
        """Where ``function``'s result is true, when it returns rank tests (``is_main_process``)."""
        return cast(Ranks | None, self._judge(function, self._returned_flag))

    def function_number(self, function: cst.FunctionDef) -> Number | None:
        """The rank number ``function`` returns (``get_rank``), if any."""
        return cast(Number | None, self._judge(function, self._returned_number))

    def _returned(self, call: cst.Call, judge: Callable[[cst.FunctionDef], object]):
        """What every function of this file that ``call`` may run returns (``get_rank()``,
        ``self.is_main()``), judged by ``judge``; None when it calls none or they disagree."""
        functions = self.source.functions_called(call, own_methods_only=True)
        if not functions:
            return None
        answers = [self._judge(function, judge) for function in functions]
        return answers[0] if all(a == answers[0] for a in answers) else None

    def _judge(self, function: cst.FunctionDef, judge: Callable[[cst.FunctionDef], object]) -> object:
        """``judge(function)``, once per function; None while it is being judged (recursion)."""
        key = (function, judge.__name__)
        if key not in self._judged:
            if key in self._busy:
                return None  # recursion: no answer from this path
            self._busy.add(key)
            try:
                self._judged[key] = judge(function)
            finally:
                self._busy.discard(key)
        return self._judged[key]

    def _returns(self, function: cst.FunctionDef) -> list[cst.Return]:
        return [r for r in self.source.of_types_in(function, cst.Return) if self.source.enclosing_function(r) is function]

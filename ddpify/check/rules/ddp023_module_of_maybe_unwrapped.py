from __future__ import annotations

import functools
import re

import libcst as cst

from ddpify.analysis.context import is_main_guard
from ddpify.analysis.wrap_tests import wrapped_here
from ddpify.check import fixes
from ddpify.check.calls import runtime_function
from ddpify.check.places import scope_of, start
from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import Wrap, assignments, ddp_wraps, wrap_in_effect
from ddpify.convert import rewrites
from ddpify.tree.cstutil import code, is_simple_reference

_TYPE_TEST = re.compile(r"\b(isinstance|hasattr|getattr)\b|\.module\b")


class ModuleOfMaybeUnwrapped(Rule):
    code = "DDP023"
    opt_in = (
        "The wrap's condition often holds wherever `.module` runs in a way the analysis cannot see (a flag "
        "set together with the wrap elsewhere)."
    )
    name = "module-of-maybe-unwrapped"
    message = "`.module` of a model that is not always wrapped: AttributeError when it is not"
    severity = "error"
    why = (
        "`model.module` exists only on a DDP (or DataParallel) wrapper. When the wrap is conditional "
        "— `if args.distributed: model = DDP(model)`, `DDP(m) if world_size > 1 else m` — or done by "
        "`ddpify.prepare_model`, which returns the plain model in a single-process run, the same line "
        "raises `AttributeError: ... has no attribute 'module'` in the runs that skipped the wrap "
        "(VectorSpaceLab/OmniGen#71 patched `model.module.save_pretrained` for exactly this). "
        '`getattr(model, "module", model)` returns the inner module when there is a wrapper and the '
        "model itself otherwise. Uses under the wrap's own condition (or an isinstance/hasattr test) "
        "are not reported."
    )
    fix = "safe"
    fix_notes = (
        'The fix replaces `model.module` by `getattr(model, "module", model)` (by '
        "`ddpify.unwrap(model)` in a script that uses ddpify.runtime): the same object where the wrap "
        "happened, the plain model where it did not."
    )
    false_positives = "A wrap whose condition always holds where the `.module` runs, in a way the analysis cannot see."
    valid = (
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model_without_ddp = model
if args.distributed:
    model = DDP(model, device_ids=[args.gpu])
    model_without_ddp = model.module
""",
        """\
import torch
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
ddpify.save(ddpify.unwrap(model).state_dict(), "model.pt")
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank])  # always wrapped
torch.save(model.module.state_dict(), "model.pt")
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

if world_size > 1:
    model = DDP(model, device_ids=[rank])
torch.save(model.module.state_dict(), "model.pt")
""",
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

if world_size > 1:
    model = DDP(model, device_ids=[rank])
torch.save(getattr(model, "module", model).state_dict(), "model.pt")
""",
        ),
        Invalid(
            """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
model.module.generate(prompt)
""",
            """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
ddpify.unwrap(model).generate(prompt)
""",
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._wraps: list[Wrap] = []
        self._assigned: dict[str, list[cst.Assign]] = {}

    def visit_Module(self, node: cst.Module) -> None:
        self._wraps = ddp_wraps(self, node)
        self._assigned = assignments(self, node) if self._wraps else {}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "module" or not is_simple_reference(node.value) or not self._wraps:
            return
        name = code(node.value)
        wraps = [w for w in self._wraps if w.target == name]
        if not wraps or self._is_target(node):
            return
        risky = [w for w in wraps if w.conditional or runtime_function(self, w.call) == "prepare_model"]
        if not risky or self._guarded(node, name):
            return
        self.report(
            node,
            f"{name}.module where {name} is not always wrapped (line {start(self, risky[0].statement)[0]}): "
            f'AttributeError when it is not; use getattr({name}, "module", {name})',
            replacement=functools.partial(rewrites.unwrapped, node.value)
            if self.file.already_converted
            else functools.partial(fixes.unwrapped, node.value, always_wrapped=False),
        )

    def _is_target(self, node: cst.Attribute) -> bool:
        parent = self.parent(node)
        return isinstance(parent, (cst.AssignTarget, cst.Del)) or (
            isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node
        )

    def _guarded(self, node: cst.Attribute, name: str) -> bool:
        """Only reached when the model is wrapped: under a test of it (``is_parallel(model)``,
        ``ddpify.analysis.wrap_tests``), after an unconditional DDP wrap in the same function, in
        the wrap's own branch, under the wrap's condition, or a type test."""
        if wrapped_here(self.file.analysis.source, node, name):
            return True  # `model.module if is_parallel(model) else model`
        wrap = wrap_in_effect(self, self._wraps, self._assigned, node, name)
        if wrap is not None and runtime_function(self, wrap.call) != "prepare_model" and not isinstance(wrap.statement.value, cst.IfExp):
            conditions = self._conditions(wrap.statement)
            if all(c in set(self.ancestors(node)) for c in conditions):
                return True
        wrap_tests = {code(c.test) for w in self._wraps if w.target == name for c in self._conditions(w.statement)}
        child: cst.CSTNode = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test:
                test = code(ancestor.test)
                if test in wrap_tests or (_TYPE_TEST.search(test) and name in test):
                    return True
            child = ancestor
        return False

    def _conditions(self, statement: cst.CSTNode) -> list[cst.If]:
        scope = scope_of(self, statement)
        found: list[cst.If] = []
        for ancestor in self.ancestors(statement):
            if ancestor is scope:
                break
            if isinstance(ancestor, cst.If) and not is_main_guard(ancestor):
                found.append(ancestor)
        return found

"""The rewrites: a libcst transformer that acts on :class:`~ddpify.convert.facts.Facts`.

Every inserted piece of code comes from ``templates/snippets.py.j2`` (see
:mod:`ddpify.snippets`). Each rewrite produces code that no rewrite matches again, which is
what makes converting twice a no-op.
"""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider, QualifiedNameProvider

from ddpify import snippets
from ddpify.convert import names
from ddpify.convert.facts import Facts, code, is_simple_reference
from ddpify.findings import Change, ManualItem

RT = "ddpify"  # the name converted scripts import the runtime as

_NodeOrRemoval = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]


class ConvertTransformer(m.MatcherDecoratableTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self, facts: Facts, *, per_process_batch: bool = False) -> None:
        super().__init__()
        self.facts = facts
        self.per_process_batch = per_process_batch
        self.changes: list[Change] = list(facts.changes)
        self.manual: list[ManualItem] = list(facts.manual)
        self._before: dict[cst.CSTNode, list[cst.BaseStatement]] = {}
        self._after: dict[cst.CSTNode, list[cst.BaseStatement]] = {}
        self._plan_insertions()

    # ---------------------------------------------------------------- helpers
    def qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def line(self, node: cst.CSTNode) -> int:
        position = self.get_metadata(PositionProvider, node, None)
        return position.start.line if position is not None else 0

    def note(self, node: cst.CSTNode, what: str) -> None:
        self.changes.append(Change(self.line(node), what))

    def _plan_insertions(self) -> None:
        for key, anchor, where in self.facts.model_wraps:
            statement = snippets.statement("prepare_model", rt=RT, model=key)
            (self._before if where == "before" else self._after).setdefault(anchor, []).append(statement)
        if self.facts.main_guard is None and self.facts.setup_after is not None:
            self._after.setdefault(self.facts.setup_after, []).insert(0, snippets.statement("setup", rt=RT))

    # ---------------------------------------------------------------- statements
    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> _NodeOrRemoval:  # type: ignore[override]
        result = super().on_leave(original_node, updated_node)
        before = self._before.get(original_node, [])
        after = self._after.get(original_node, [])
        if not before and not after:
            return result
        for statement in before + after:
            if m.matches(statement, m.SimpleStatementLine(body=[m.Assign()])):
                self.note(original_node, f"wrap the model for DDP: {code(statement).strip()}")
            else:
                self.note(original_node, "set up the process group after the imports (torn down at exit)")
        kept: list[cst.CSTNode] = []
        if isinstance(result, cst.FlattenSentinel):
            kept = list(result.nodes)
        elif isinstance(result, cst.CSTNode):
            kept = [result]
        return cst.FlattenSentinel([*before, *kept, *after])

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        keys = self.facts.set_epoch.get(original_node)
        if not keys or not isinstance(updated_node.body, cst.IndentedBlock):
            if keys:
                self.manual.append(
                    ManualItem(self.line(original_node), "one-line epoch loop", "call ddpify.set_epoch(loader, epoch) at the top of each epoch")
                )
            return updated_node
        epoch = code(original_node.target)
        calls = [snippets.statement("set_epoch", rt=RT, loader=key, epoch=epoch) for key in keys]
        for key in keys:
            self.note(original_node, f"reshuffle {key} every epoch: ddpify.set_epoch({key}, {epoch})")
        body = updated_node.body
        return updated_node.with_changes(body=body.with_changes(body=[*calls, *body.body]))

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> Union[cst.If, cst.RemovalSentinel]:
        if original_node is self.facts.main_guard and isinstance(updated_node.body, cst.IndentedBlock):
            block = snippets.statement("distributed_block", rt=RT)
            assert isinstance(block, cst.With)
            self.note(original_node, "run the __main__ block inside ddpify.distributed(): process group set up, torn down also on errors")
            wrapped = block.with_changes(body=updated_node.body)
            return updated_node.with_changes(body=cst.IndentedBlock(body=[wrapped]))
        if not updated_node.body.body and original_node.body.body:
            if updated_node.orelse is None:
                return cst.RemoveFromParent()
            return updated_node.with_changes(body=updated_node.body.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])]))
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> Union[cst.SimpleStatementLine, cst.RemovalSentinel]:
        body = [s for s in updated_node.body if not _is_self_assignment(s)]
        if len(body) == len(updated_node.body):
            return updated_node
        if not body:
            return cst.RemoveFromParent()
        return updated_node.with_changes(body=body)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if len(original_node.targets) != 1:
            return updated_node
        target = original_node.targets[0].target
        name = target.attr.value if isinstance(target, cst.Attribute) else target.value if isinstance(target, cst.Name) else ""
        if not names.DEVICE_VARIABLE.match(name):
            return updated_node
        value = self._device_value(updated_node.value, allow_int=True)
        if value is updated_node.value:
            return updated_node
        self.note(original_node, f"{code(target)} is the local rank's device (cuda:LOCAL_RANK, else cpu)")
        return updated_node.with_changes(value=value)

    # ---------------------------------------------------------------- expressions
    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if original_node.attr.value == "module" and code(original_node.value) in self.facts.model_keys:
            self.note(original_node, f"{code(original_node)} → ddpify.unwrap({code(original_node.value)}) (works wrapped or not)")
            return snippets.expression("unwrap", rt=RT, model=code(original_node.value))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        qualified = self.qualified(original_node)
        for rewrite in (
            self._loader,
            self._dataparallel,
            self._device_call,
            self._seed,
            self._checkpoint,
            self._output,
            self._model_state,
            self._local_rank_argument,
        ):
            result = rewrite(original_node, updated_node, qualified)
            if result is not None:
                return result
        return updated_node

    def _loader(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        fact = self.facts.loaders.get(original)
        if fact is None:
            return None
        label = fact.key or "DataLoader"
        if fact.role == "eval":
            self.note(original, f"{label} is an evaluation loader ({fact.reason}): left unsharded, every rank evaluates the full set")
            return updated
        args = list(updated.args)
        per_process = self.per_process_batch or fact.batch_used_at is not None
        if per_process:
            args.append(cst.Arg(keyword=cst.Name("per_process_batch"), value=snippets.expression("per_process_batch"), equal=_EQUAL))
        if fact.batch_used_at is not None and not self.per_process_batch:
            self.manual.append(ManualItem(
                self.line(original),
                f"{fact.batch_expression} is also used at line {fact.batch_used_at} as if it were the size of every batch, "
                "so splitting the global batch would break that code: this loader keeps the per-process batch",
                f"effective batch = {fact.batch_expression} x world_size: scale the learning rate, or use the real batch length there and convert again",
            ))
        self.note(original, f"{label} gets a DistributedSampler ({fact.reason}); {'per-process batch kept (effective batch x world_size)' if per_process else 'global batch preserved: per-rank batch = batch // world_size'}")
        if _has_keyword(original, "sampler"):
            self.note(original, f"{label}: your sampler is kept and sharded across ranks")
        if _has_keyword(original, "batch_sampler"):
            self.manual.append(ManualItem(self.line(original), f"{label} uses a batch_sampler", "each rank takes every world_size-th batch, so the global batch grows by world_size: scale the learning rate or the batch sampler"))
        return updated.with_changes(func=snippets.expression("distributed_loader", rt=RT), args=_fix_commas(args))

    def _dataparallel(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        if qualified & names.DATAPARALLEL and updated.args:
            self.note(original, "nn.DataParallel removed: DistributedDataParallel replaces it")
            return updated.args[0].value
        if "torch.nn.parallel.data_parallel" in qualified and len(updated.args) >= 2:
            self.note(original, "data_parallel(module, input) → module(input): DDP replaces it")
            return cst.Call(func=updated.args[0].value, args=[updated.args[1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        return None

    def _device_call(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        device = snippets.expression("device", rt=RT)
        if qualified & names.CURRENT_ACCELERATOR:
            self.note(original, "accelerator device → the local rank's device")
            return device
        if qualified & names.TORCH_DEVICE and len(updated.args) == 1 and updated.args[0].keyword is None:
            value = self._device_value(updated.args[0].value, allow_int=True)
            if value is updated.args[0].value:
                if not isinstance(value, (cst.SimpleString, cst.Call)):
                    self.manual.append(ManualItem(self.line(original), f"device comes from {code(value)}", "make sure it names the local rank's GPU (ddpify.device()), not cuda:0 on every rank"))
                return None
            self.note(original, "CUDA device → the local rank's device (cuda:LOCAL_RANK, else cpu)")
            return device if _is_cuda_literal(updated.args[0].value, allow_int=True) else updated.with_changes(args=[updated.args[0].with_changes(value=value)])
        if not isinstance(updated.func, cst.Attribute) or self._is_module(original.func.value):  # type: ignore[attr-defined]
            return self._device_keyword(original, updated)
        method = updated.func.attr.value
        if method == "cuda" and not any(a.star for a in updated.args):
            keep = [a for a in updated.args if a.keyword is not None and a.keyword.value == "non_blocking"]
            self.note(original, ".cuda() → .to(ddpify.device())")
            return updated.with_changes(
                func=updated.func.with_changes(attr=cst.Name("to")),
                args=_fix_commas([cst.Arg(device), *keep]),
            )
        if method == "to" and updated.args and updated.args[0].keyword is None:
            value = self._device_value(updated.args[0].value, allow_int=True)
            if value is not updated.args[0].value:
                self.note(original, ".to(<cuda>) → .to(ddpify.device())")
                return updated.with_changes(args=[updated.args[0].with_changes(value=value), *updated.args[1:]])
        return self._device_keyword(original, updated)

    def _device_keyword(self, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
        args = list(updated.args)
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "device":
                value = self._device_value(arg.value, allow_int=False)
                if value is not arg.value:
                    args[index] = arg.with_changes(value=value)
                    self.note(original, "device='cuda' → device=ddpify.device()")
                    return updated.with_changes(args=args)
        return None

    def _device_value(self, value: cst.BaseExpression, *, allow_int: bool) -> cst.BaseExpression:
        """``"cuda"``, ``"cuda:0"``, ``0`` (and those inside ``a if c else b``) → ddpify.device()."""
        if _is_cuda_literal(value, allow_int=allow_int):
            return snippets.expression("device", rt=RT)
        if isinstance(value, cst.IfExp):
            body = self._device_value(value.body, allow_int=allow_int)
            orelse = self._device_value(value.orelse, allow_int=allow_int)
            if body is not value.body or orelse is not value.orelse:
                return value.with_changes(body=body, orelse=orelse)
        if isinstance(value, cst.Call) and self._is_torch_device(value) and len(value.args) == 1:
            inner = self._device_value(value.args[0].value, allow_int=allow_int)
            if inner is not value.args[0].value:
                return snippets.expression("device", rt=RT) if _is_cuda_literal(value.args[0].value, allow_int=allow_int) else value
        return value

    def _is_module(self, node: cst.BaseExpression) -> bool:
        """``torch`` / ``torch.cuda``: a module, whose ``.cuda``/``.to`` are not tensor methods."""
        return is_simple_reference(node) and any(q == "torch" or q.startswith("torch.") for q in self.qualified(node))

    def _is_torch_device(self, call: cst.Call) -> bool:
        try:
            return bool(self.qualified(call) & names.TORCH_DEVICE)
        except KeyError:
            return False

    def _seed(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        if not qualified & names.SEED_FUNCTIONS or not updated.args:
            return None
        self.note(original, f"{code(original.func)}(...) → ddpify.seed: same seed on every rank for model init and data, then seed + rank once training starts")
        return cst.Call(func=snippets.expression("seed", rt=RT), args=_fix_commas([cst.Arg(updated.func), *updated.args]))

    def _checkpoint(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        if qualified & names.TORCH_SAVE:
            self.note(original, "torch.save → ddpify.save: written once by rank 0 (atomically), the other ranks wait for it")
            return updated.with_changes(func=snippets.expression("save", rt=RT))
        if qualified & names.TORCH_LOAD and len(updated.args) < 2 and not _has_keyword(original, "map_location"):
            if any(a.star for a in updated.args):
                return None
            self.note(original, "torch.load gets map_location=ddpify.device()")
            location = cst.Arg(keyword=cst.Name("map_location"), value=snippets.expression("map_location", rt=RT), equal=_EQUAL)
            return updated.with_changes(args=_fix_commas([*updated.args, location]))
        return None

    def _output(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        if qualified & names.PRINT:
            self.note(original, "print → ddpify.print (rank 0 only)")
            return updated.with_changes(func=snippets.expression("print", rt=RT))
        if qualified & names.TQDM:
            args = list(updated.args)
            for index, arg in enumerate(args):
                if arg.keyword is not None and arg.keyword.value == "disable":
                    if "is_main_process" in code(arg.value):
                        return None
                    original_flag = code(arg.value) if is_simple_reference(arg.value) else f"({code(arg.value)})"
                    args[index] = arg.with_changes(value=snippets.expression("tqdm_disable_combined", rt=RT, original=original_flag))
                    break
            else:
                args.append(cst.Arg(keyword=cst.Name("disable"), value=snippets.expression("tqdm_disable", rt=RT), equal=_EQUAL))
            self.note(original, "progress bar shown on rank 0 only")
            return updated.with_changes(args=_fix_commas(args))
        if qualified & names.SUMMARY_WRITERS or any(q.startswith(names.WANDB_PREFIX) for q in qualified):
            self.note(original, f"{code(original.func)} runs on rank 0 only (other ranks get a no-op object)")
            return updated.with_changes(func=snippets.expression("rank_zero", rt=RT, factory=code(updated.func)))
        return None

    def _model_state(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        func = original.func
        if not isinstance(func, cst.Attribute) or code(func.value) not in self.facts.model_keys:
            return None
        model = code(func.value)
        if func.attr.value == "state_dict":
            self.note(original, f"{model}.state_dict() taken from the unwrapped model (no 'module.' keys)")
            return updated.with_changes(func=updated.func.with_changes(value=snippets.expression("unwrap", rt=RT, model=model)))  # type: ignore[attr-defined]
        if func.attr.value == "load_state_dict" and updated.args:
            self.note(original, f"{model}.load_state_dict → ddpify.load_state_dict (loads into the unwrapped model, strips 'module.')")
            return cst.Call(func=snippets.expression("load_state_dict", rt=RT), args=_fix_commas([cst.Arg(func.value), *updated.args]))
        return None

    def _local_rank_argument(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> Optional[cst.BaseExpression]:
        if not m.matches(original.func, m.Attribute(attr=m.Name("add_argument"))) or not updated.args:
            return None
        flags = [a for a in updated.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
        spelled = {a.value.evaluated_value for a in flags}  # type: ignore[union-attr]
        if not spelled & set(names.LOCAL_RANK_FLAGS):
            return None
        args = list(updated.args)
        missing = [f for f in names.LOCAL_RANK_FLAGS if f not in spelled]
        insert_at = max(args.index(a) for a in flags) + 1
        for flag in missing:
            args.insert(insert_at, cst.Arg(cst.SimpleString(f'"{flag}"')))
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "default":
                if "local_rank_argument" in code(arg.value):
                    return None if not missing else updated.with_changes(args=_fix_commas(args))
                args[index] = arg.with_changes(value=snippets.expression("local_rank_default", rt=RT, original=code(arg.value)))
                break
        else:
            args.append(cst.Arg(keyword=cst.Name("default"), value=snippets.expression("local_rank_default", rt=RT, original="None"), equal=_EQUAL))
        self.note(original, "--local_rank keeps working under torchrun: both spellings accepted, default is LOCAL_RANK under a launcher")
        return updated.with_changes(args=_fix_commas(args))


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _is_cuda_literal(value: cst.BaseExpression, *, allow_int: bool) -> bool:
    if isinstance(value, cst.SimpleString):
        return bool(names.CUDA_STRING.match(str(value.evaluated_value)))
    return allow_int and isinstance(value, cst.Integer)


def _has_keyword(call: cst.Call, name: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == name for a in call.args)


def _is_self_assignment(statement: cst.BaseSmallStatement) -> bool:
    """``model = model``: what ``model = nn.DataParallel(model)`` becomes once DP is gone."""
    return (
        isinstance(statement, cst.Assign)
        and len(statement.targets) == 1
        and is_simple_reference(statement.value)
        and code(statement.targets[0].target) == code(statement.value)
    )


def _fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Commas between arguments, keeping the caller's own comma whitespace where it exists."""
    fixed: list[cst.Arg] = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        if not last and not isinstance(arg.comma, cst.Comma):
            fixed.append(arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        else:
            fixed.append(arg)
    return fixed


"""The rewrites: a libcst transformer that acts on :class:`~ddpify.convert.facts.Facts`.

Every inserted piece of code comes from ``templates/snippets.py.j2`` (see
:mod:`ddpify.snippets`). Each rewrite produces code that no rewrite matches again, which is
what makes converting twice a no-op.
"""

from __future__ import annotations

import re
from typing import TypeVar

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from ddpify import snippets
from ddpify.analysis import Analysis
from ddpify.analysis.divergence import Divergent
from ddpify.analysis.loads import rng_states_only
from ddpify.convert import collectives, loader_calls, names, rewrites
from ddpify.convert.facts import Facts
from ddpify.convert.rewrites import RT
from ddpify.findings import Change, ManualItem
from ddpify.tree import cstutil, realign
from ddpify.tree.cstutil import attribute_name, code, is_simple_reference
from ddpify.tree.qualified_names import BindingProvider

_NodeOrRemoval = cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel
_Valued = TypeVar("_Valued", cst.Arg, cst.DictElement)
# "used at line 10" is an input line: right in the report, wrong inside the output file, whose
# lines have moved; --annotate comments leave it out.
_INPUT_LINE = re.compile(r" at line \d+")


class ConvertTransformer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, BindingProvider)

    def __init__(self, facts: Facts, analysis: Analysis, *, per_process_batch: bool = False, annotate: bool = False) -> None:
        super().__init__()
        self.facts = facts
        self.analysis = analysis  # of the same wrapper: its nodes are this visit's original nodes
        self.per_process_batch = per_process_batch
        self.annotate = annotate
        self.changes: list[Change] = list(facts.changes)
        self.manual: list[ManualItem] = list(facts.manual)
        # statements to insert before / after an original one, each with its report line
        self._before: dict[cst.CSTNode, list[tuple[cst.BaseStatement, str]]] = {}
        self._after: dict[cst.CSTNode, list[tuple[cst.BaseStatement, str]]] = {}
        self._plan_insertions()

    # ---------------------------------------------------------------- helpers
    def qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def line(self, node: cst.CSTNode) -> int:
        position = self.get_metadata(PositionProvider, node, None)
        return position.start.line if position is not None else 0

    def is_model(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` is a trained model: its key, and for a plain name a binding of the
        model's own scopes or a parameter (a function handed the model). ``model`` bound by
        other code elsewhere (``model = parser.add_argument_group(...)``) is another object."""
        key = code(node)
        if key not in self.facts.model_keys or not isinstance(node, cst.Name) or key not in self.facts.model_scopes:
            return key in self.facts.model_keys
        bindings = self.get_metadata(BindingProvider, node, None)
        if bindings is None:  # built by a rewrite: no metadata
            return True
        return not bindings or any(b.scope in self.facts.model_scopes[key] or b.parameter for b in bindings)

    def note(self, node: cst.CSTNode, what: str) -> None:
        self.changes.append(Change(self.line(node), what))

    def _noted(self, node: cst.CSTNode, rewritten: cst.Call | None, what: str) -> cst.Call | None:
        """A rewrite that may not apply (None): noted in the report only when it did."""
        if rewritten is not None:
            self.note(node, what)
        return rewritten

    def _plan_insertions(self) -> None:
        for key, anchor, where in self.facts.model_wraps:
            statement = snippets.statement("prepare_model", rt=RT, model=key, options=self.facts.wrap_options.get((anchor, key), ""))
            what = f"wrap the model for DDP: {code(statement).strip()}"
            (self._before if where == "before" else self._after).setdefault(anchor, []).append((statement, what))
        for insertion in self.facts.inserted:
            (self._before if insertion.before else self._after).setdefault(insertion.anchor, []).append(
                (insertion.statement, insertion.what)
            )
        for loader in self.facts.helper_loaders:
            batch = self.per_process_batch or loader.batch_used_at is not None
            statement = rewrites.sharded(loader.key, per_process_batch=batch, only_when_training=loader.decided)
            what = loader.rebuild_note(code(statement).strip(), per_process_batch=self.per_process_batch)
            (self._before if loader.before else self._after).setdefault(loader.statement, []).append((statement, what))
        for built, loaders in self.facts.set_epoch_after.items():
            for key, epoch in loaders:
                statement = snippets.statement("set_epoch", rt=RT, loader=key, epoch=epoch)
                self._after.setdefault(built, []).append(
                    (statement, f"reshuffle {key} every epoch where it is built: ddpify.set_epoch({key}, {epoch})")
                )
        if self.facts.setup_after is not None:
            setup = snippets.statement("setup", rt=RT, hashes="yes" if self.facts.same_string_hashes else "")
            self._after.setdefault(self.facts.setup_after, []).insert(
                0, (setup, "set up the process group after the imports (torn down at exit)")
            )

    # ---------------------------------------------------------------- statements
    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> _NodeOrRemoval:  # type: ignore[override]
        result = super().on_leave(original_node, updated_node)
        planned = self.facts.node_rewrites.get(original_node)
        if planned is not None and isinstance(result, cst.CSTNode):
            self.note(original_node, planned.what)
            result = planned.rewrite(result)
        if self.annotate and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            result = self._annotated(original_node, result)
        before = self._before.get(original_node, [])
        after = self._after.get(original_node, [])
        if not before and not after:
            return result
        for _, what in before + after:
            self.note(original_node, what)
        kept: list[cst.CSTNode] = []
        if isinstance(result, cst.FlattenSentinel):
            kept = list(result.nodes)
        elif isinstance(result, cst.CSTNode):
            kept = [result]
        return cst.FlattenSentinel([*(s for s, _ in before), *kept, *(s for s, _ in after)])

    def _annotated(self, original_node: cst.CSTNode, statement: cst.BaseStatement) -> cst.BaseStatement:
        """``# ddpify: why -> what to do`` above the statement an item is about (once)."""
        line = self.line(original_node)
        present = {c.comment.value for c in cstutil.leading_lines(statement) if c.comment is not None}
        comments = [
            cst.EmptyLine(comment=cst.Comment(text))
            for text in dict.fromkeys(
                f"# ddpify: {_INPUT_LINE.sub('', item.why)} -> {item.todo}" for item in self.manual if item.line == line
            )
            if text not in present
        ]
        if not comments:
            return statement
        return statement.with_changes(leading_lines=[*cstutil.leading_lines(statement), *comments])

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        accumulation = self.facts.accumulation.get(original_node)
        if accumulation is not None:
            model, when = accumulation
            self.note(
                original_node,
                f"gradient accumulation: micro-batches that do not step skip the all-reduce (ddpify.sync_gradients({model}, when={when}))",
            )
            updated_node = rewrites.synced_accumulation(updated_node, model, when)
        keys = self.facts.set_epoch.get(original_node)
        if not keys or not isinstance(updated_node.body, cst.IndentedBlock):
            if keys:
                epoch = code(original_node.target)
                self.manual.append(
                    ManualItem(
                        self.line(original_node),
                        f"the epoch loop keeps its body on the `for {epoch} in ...:` line, where ddpify.set_epoch cannot be inserted",
                        f"put the body on its own lines and call {', '.join(f'ddpify.set_epoch({k}, {epoch})' for k in keys)} first in it",
                    )
                )
            return updated_node
        epoch = code(original_node.target)
        for key in keys:
            self.note(original_node, f"reshuffle {key} every epoch: ddpify.set_epoch({key}, {epoch})")
        return rewrites.with_set_epoch(updated_node, keys)

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If | cst.RemovalSentinel:
        if original_node is self.facts.main_guard and isinstance(updated_node.body, cst.IndentedBlock):
            block = snippets.statement("distributed_block", rt=RT, hashes="yes" if self.facts.same_string_hashes else "")
            assert isinstance(block, cst.With)
            self.note(original_node, "run the __main__ block inside ddpify.distributed(): process group set up, torn down also on errors")
            wrapped = block.with_changes(body=updated_node.body)
            return updated_node.with_changes(body=cst.IndentedBlock(body=[wrapped]))
        local_parts = self.analysis.rank_tests.local_main_parts(original_node.test)
        if local_parts:
            self.note(original_node, f"`{code(original_node.test)}` is true once per node: the guard now tests ddpify.is_main_process()")
            updated_node = rewrites.main_process_guard(updated_node, local_parts)
        if not updated_node.body.body and original_node.body.body:
            if updated_node.orelse is None:
                return cst.RemoveFromParent()
            return updated_node.with_changes(body=updated_node.body.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])]))
        return self._main_process_only(original_node, updated_node)  # type: ignore[return-value]

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.With | cst.If | cst.RemovalSentinel:
        body = [s for s in updated_node.body if not _is_self_assignment(s) and not _is_leftover_reference(s, original_node)]
        if len(body) == len(updated_node.body):
            if original_node in self.facts.downloads:
                self.note(
                    original_node, "download under ddpify.main_process_first(): rank 0 downloads, the others wait and reuse the files"
                )
                return rewrites.downloaded_once(updated_node)
            helper = self.facts.rank_zero_helpers.get(original_node)
            if helper is not None:
                self.note(original_node, f"{helper}(): checkpoint code in another file: guarded to rank 0; it must not call collectives")
                return rewrites.main_process_only(updated_node)
            return self._main_process_only(original_node, updated_node)  # type: ignore[return-value]
        if not body:
            return cst.RemoveFromParent()
        return updated_node.with_changes(body=body)

    def leave_With(self, original_node: cst.With, updated_node: cst.With) -> cst.BaseStatement:
        return self._main_process_only(original_node, updated_node)

    def _main_process_only(self, original: cst.BaseStatement, updated: cst.BaseStatement) -> cst.BaseStatement:
        """A write the single-GPU script made once goes under ``if ddpify.is_main_process():``."""
        what = self.facts.main_process_only.get(original)
        if what is None:
            return updated
        self.note(original, f"{what} on rank 0 only: under `if ddpify.is_main_process():` (every rank would write the same output)")
        return rewrites.main_process_only(updated)

    def leave_DictElement(self, original_node: cst.DictElement, updated_node: cst.DictElement) -> cst.DictElement:
        if original_node not in self.facts.unwrapped_values:
            return updated_node
        return self._saved_unwrapped(original_node, updated_node)

    def _saved_unwrapped(self, original: _Valued, updated: _Valued) -> _Valued:
        """A model saved or exported whole: ``ddpify.unwrap(model)``, the plain module."""
        model = code(original.value)
        self.note(original, f"{model} saved whole: ddpify.unwrap({model}) is written, not the DDP wrapper")
        return updated.with_changes(value=rewrites.unwrapped(original.value))

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if len(original_node.targets) != 1:
            return updated_node
        target = original_node.targets[0].target
        name = target.attr.value if isinstance(target, cst.Attribute) else target.value if isinstance(target, cst.Name) else ""
        if not names.DEVICE_VARIABLE.match(name):
            return updated_node
        value = rewrites.device_value(updated_node.value, allow_int=True, is_torch_device=self._is_torch_device, text=True)
        if value is updated_node.value:
            return updated_node
        self.note(original_node, f"{code(target)} is the local rank's device (cuda:LOCAL_RANK, else cpu)")
        return updated_node.with_changes(value=value)

    # ---------------------------------------------------------------- expressions
    def visit_Import(self, node: cst.Import) -> bool:
        return False  # `import transformer.Models` is a module path, even if a model is called `transformer`

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        model = code(original_node.value)
        if original_node in self.facts.kept_attributes or not self.is_model(original_node.value):
            return updated_node
        attr = original_node.attr.value
        if attr == "module":
            self.note(original_node, f"{code(original_node)} → ddpify.unwrap({model}) (works wrapped or not)")
            return rewrites.unwrapped(original_node.value)
        if attr not in names.MODULE_API:
            self.note(original_node, f"{model}.{attr} read through ddpify.unwrap({model}): the DDP wrapper does not have it")
            return updated_node.with_changes(value=rewrites.unwrapped(original_node.value))
        return updated_node

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if original_node in self.facts.unwrapped_values:
            return self._saved_unwrapped(original_node, updated_node)
        if original_node in self.facts.unwrapped_args:
            to, name = self.facts.unwrapped_args[original_node], code(original_node.value)
            self.note(original_node, f"{name} handed to {to} as ddpify.unwrap({name}): the plain module, not the DDP wrapper")
            return updated_node.with_changes(value=rewrites.unwrapped(updated_node.value))
        if original_node in self.facts.unsharded_args:
            self.note(
                original_node,
                f"{code(original_node.value)} is evaluated here: passed unsharded (ddpify.unsharded) so the metric covers all the data on every rank",
            )
            return updated_node.with_changes(value=rewrites.unsharded(updated_node.value))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        return realign.follow_bracket(original_node, self._call(original_node, updated_node), self.metadata[PositionProvider].get)  # type: ignore[arg-type]

    def _call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        generator = self.facts.rank_generators.get(original_node)
        if generator is not None:
            self.note(
                original_node,
                f"{code(original_node.func)}() draws training batches: each rank draws its own with generator={code(generator)}",
            )
            return rewrites.with_keyword(updated_node, "generator", generator)
        if original_node in self.facts.dropped_moves:
            self.note(
                original_node,
                f"{code(original_node.func)}() dropped: the DDP-wrapped model stays on its device during training (checkpoints keep that device)",
            )
            return updated_node.func.value  # type: ignore[attr-defined]
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

    def _loader(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        fact = self.facts.loaders.get(original)
        return loader_calls.rewrite(self, fact, original, updated) if fact is not None else None

    def _dataparallel(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        if qualified & names.DATAPARALLEL and updated.args:
            wrapped = {key for key, _, _ in self.facts.model_wraps}
            named = {code(original.args[0].value), *self._assigned_to(original)}
            self.note(
                original,
                "nn.DataParallel removed: DistributedDataParallel replaces it"
                if named & wrapped
                else "nn.DataParallel removed: under DDP each process runs the model on its own device",
            )
            return rewrites.without_dataparallel(updated)
        if "torch.nn.parallel.data_parallel" in qualified and len(updated.args) >= 2:
            self.note(original, "data_parallel(module, input) → module(input): DDP replaces it")
            return rewrites.without_data_parallel_function(updated)
        return None

    def _assigned_to(self, call: cst.Call) -> list[str]:
        """``model`` of ``model = nn.DataParallel(net)``."""
        statement = self.analysis.source.parent(call)
        return [code(t.target) for t in statement.targets] if isinstance(statement, cst.Assign) else []

    def _device_call(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        if qualified & names.CURRENT_ACCELERATOR:
            self.note(original, "accelerator device → the local rank's device")
            return rewrites.device()
        if qualified & names.TORCH_DEVICE and len(updated.args) == 1 and updated.args[0].keyword is None:
            value = self._device_value(updated.args[0].value, allow_int=True)
            if value is updated.args[0].value:
                per_rank = f"{RT}.device()" in code(value) or f"{RT}.device_from(" in code(value)
                if not isinstance(value, (cst.SimpleString, cst.Call)) and not per_rank:
                    self.manual.append(
                        ManualItem(
                            self.line(original),
                            f"torch.device({code(value)}): a value ddpify cannot read; if it names one GPU (cuda:0), every rank uses that GPU",
                            "make sure it names the local rank's GPU (ddpify.device()), not cuda:0 on every rank",
                        )
                    )
                return None
            self.note(original, "CUDA device → the local rank's device (cuda:LOCAL_RANK, else cpu)")
            if rewrites.is_cuda_literal(updated.args[0].value, allow_int=True):
                return rewrites.device()
            return updated.with_changes(args=[updated.args[0].with_changes(value=value)])
        if not isinstance(updated.func, cst.Attribute) or self._is_module(original.func.value):  # type: ignore[attr-defined]
            return self._device_keyword(original, updated)
        method = updated.func.attr.value
        if method == "cuda" and not any(a.star for a in updated.args):
            self.note(original, ".cuda() → .to(ddpify.device())")
            return rewrites.cuda_to_device(updated)
        if method == "to" and updated.args and updated.args[0].keyword is None:
            value = self._device_value(updated.args[0].value, allow_int=True)
            if value is not updated.args[0].value:
                self.note(original, ".to(<cuda>) → .to(ddpify.device())")
                return updated.with_changes(args=[updated.args[0].with_changes(value=value), *updated.args[1:]])
        return self._device_keyword(original, updated)

    def _device_keyword(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        args = list(updated.args)
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value in ("device", "map_location"):
                value = self._device_value(arg.value, allow_int=False)
                if value is not arg.value:
                    args[index] = arg.with_changes(value=value)
                    self.note(
                        original, f"{arg.keyword.value}={code(arg.value)} → {arg.keyword.value}=ddpify.device() (the local rank's device)"
                    )
                    return updated.with_changes(args=args)
        return None

    def _device_value(self, value: cst.BaseExpression, *, allow_int: bool) -> cst.BaseExpression:
        return rewrites.device_value(value, allow_int=allow_int, is_torch_device=self._is_torch_device)

    def _is_module(self, node: cst.BaseExpression) -> bool:
        """``torch`` / ``torch.cuda``: a module, whose ``.cuda``/``.to`` are not tensor methods."""
        return is_simple_reference(node) and any(q == "torch" or q.startswith("torch.") for q in self.qualified(node))

    def _is_torch_device(self, call: cst.Call) -> bool:
        try:
            return bool(self.qualified(call) & names.TORCH_DEVICE)
        except KeyError:  # a node built by a previous rewrite has no metadata
            return False

    def _seed(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        if not qualified & names.SEED_FUNCTIONS or not updated.args:
            return None
        sharded = self.facts.shards_training() or self.facts.trains_in_modules
        then = (
            "then seed + rank once training starts"
            if sharded
            else "and, with no sharded loader to start training, for the whole run (evaluation draws agree across ranks)"
        )
        self.note(original, f"{code(original.func)}(...) → ddpify.seed: same seed on every rank for model init and data, {then}")
        return rewrites.seeded(updated)

    def _checkpoint(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        if qualified & names.TORCH_SAVE:
            # ddpify.save waits for every rank: behind a rank test it would hang the others
            kept = "already behind a rank test" if not self.analysis.context.every_rank(original) else None
            if kept or self.analysis.output.per_rank_file(original):
                self.note(original, f"torch.save {kept or 'into a file that names the rank: each rank saves its own'}: left as it is")
                return None
            divergent = collectives.unwaited_save(self.analysis, original)
            if divergent is not None:
                self._report_divergent_save(original, divergent)
                return rewrites.rank_zero_save(updated, wait=False)
            self.note(original, "torch.save → ddpify.save: written once by rank 0 (atomically), the other ranks wait for it")
            return rewrites.rank_zero_save(updated)
        if qualified & names.MAKE_DIRECTORY:
            return self._noted(
                original,
                rewrites.makedirs_exist_ok(updated),
                "directory creation tolerates the other ranks: os.makedirs(..., exist_ok=True)",
            )
        if qualified & names.TORCH_LOAD and not rng_states_only(self.analysis.source, original):  # RNG states stay on the CPU
            return self._noted(original, rewrites.with_map_location(updated), "torch.load gets map_location=ddpify.device()")
        return None

    def _report_divergent_save(self, original: cst.Call, divergent: Divergent) -> None:
        statement = self.analysis.source.statement_of(original) or original
        self.note(original, collectives.save_change(divergent))
        self.manual.append(collectives.save_item(self.line(statement), divergent))

    def _output(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        if qualified & names.PRINT and original not in self.facts.kept_writes:
            self.note(original, "print → ddpify.print (rank 0 only)")
            return rewrites.rank_zero_print(updated)
        if qualified & names.TQDM and original not in self.facts.kept_writes:
            return self._noted(original, rewrites.quiet_progress_bar(updated), "progress bar shown on rank 0 only")
        if original in self.facts.rank_zero_opens:
            self.note(
                original,
                "file opened for writing on rank 0 only: ddpify.rank_zero(open) (other ranks get a no-op file; the code around it still runs everywhere)",
            )
            return rewrites.rank_zero_factory(updated)
        if names.is_rank_zero_client(qualified) and original not in self.facts.kept_writes:
            self.note(original, f"{code(original.func)} runs on rank 0 only (other ranks get a no-op object)")
            return rewrites.rank_zero_factory(updated)
        if original in self.facts.rank_zero_clients and original not in self.facts.kept_writes:
            what = f"{code(original.func)} (project code that writes files or logs on every rank)"
            self.note(original, f"{what} is built on rank 0 only: ddpify.rank_zero (other ranks get a no-op object)")
            return rewrites.rank_zero_factory(updated)
        return None

    def _model_state(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        func = original.func
        if not isinstance(func, cst.Attribute) or not self.is_model(func.value):
            return None
        model = code(func.value)
        if func.attr.value == "state_dict":
            self.note(original, f"{model}.state_dict() taken from the unwrapped model (no 'module.' keys)")
            return rewrites.unwrapped_state_dict(updated)
        if func.attr.value == "load_state_dict" and updated.args:
            self.note(original, f"{model}.load_state_dict → ddpify.load_state_dict (loads into the unwrapped model, strips 'module.')")
            return rewrites.unwrapped_load_state_dict(updated)
        return None

    def _local_rank_argument(self, original: cst.Call, updated: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
        if attribute_name(original.func) != "add_argument" or not updated.args:
            return None
        return self._noted(
            original,
            rewrites.local_rank_argument(updated),
            "--local_rank keeps working under torchrun: both spellings accepted, default is LOCAL_RANK under a launcher",
        )


def _is_leftover_reference(statement: cst.BaseSmallStatement, original: cst.SimpleStatementLine) -> bool:
    """``model`` alone: what ``model.cpu()`` becomes once the move is dropped."""
    return (
        isinstance(statement, cst.Expr)
        and is_simple_reference(statement.value)
        and not any(isinstance(s, cst.Expr) and is_simple_reference(s.value) for s in original.body)
    )


def _is_self_assignment(statement: cst.BaseSmallStatement) -> bool:
    """``model = model``: what ``model = nn.DataParallel(model)`` becomes once DP is gone."""
    return (
        isinstance(statement, cst.Assign)
        and len(statement.targets) == 1
        and is_simple_reference(statement.value)
        and code(statement.targets[0].target) == code(statement.value)
    )

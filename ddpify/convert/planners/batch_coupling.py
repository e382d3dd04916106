"""Semantics that change with the per-rank batch where the conversion cannot see them.

By default a training loader keeps the *global* batch: each rank's loader yields
``batch_size // world_size`` samples. Code of this file that reads the batch size as the length
of a batch makes the loader keep the per-process batch instead (``loaders.plan``). Two couplings
stay out of that test, and are reported:

- the batch-size variable's object goes to a function or class of another project file
  (SimCLR: ``SimCLR(model=model, ..., args=args)``, whose loss builds its labels from
  ``self.args.batch_size``): that code still sees the global size and no longer matches the
  batches it gets (a crash, or a wrong loss);
- a similarity matrix of a batch with itself on the training path (``torch.mm(out, out.t())``,
  ``features @ features.T``: contrastive losses): each rank compares only its own batch's
  samples, so the negatives of a sample are those of its rank, not of the whole step;
- a loss summed over the batch (``reduction="sum"``, ``size_average=False``, or ``.sum()`` of a
  ``reduction="none"`` loss) reaches ``backward()``: DDP averages the ranks' gradients, so the
  gradient of a step is ``1/world_size`` of the single-process one for the same global batch.
"""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.calls import HARMLESS_CALLS, project_helper
from ddpify.convert.planners.file_writes import recording_statement
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import callee_name, code, is_simple_reference, keyword_value, of_types

# what a function of another file may do with the batch size: train, compute a loss
_TRAINS = ("loss", "criterion", "trainer", "train", "fit", "contrastive", "ntxent", "simclr")


def report(recording: Recording, facts: Facts) -> None:
    _report_handed_batch_size(recording, facts)
    _report_in_batch_similarity(recording, facts)
    _report_sum_losses(recording, facts)


# ---------------------------------------------------------------- samples compared with each other
_MATMULS = frozenset({"torch.mm", "torch.matmul", "torch.Tensor.mm", "torch.Tensor.matmul"})


def _report_in_batch_similarity(recording: Recording, facts: Facts) -> None:
    """Once per function: a matrix product of a batch's rows with the transpose of a batch's
    rows, where batches are trained on (the file trains: it is meant to run under DDP, also
    when its model is wrapped in another file)."""
    on_training_path = recording.analysis.dataflow.on_training_path
    reported: set[cst.CSTNode | None] = set()
    for node in recording.analysis.source.of_types(cst.Call, cst.BinaryOperation):
        operands = _matrix_product(recording, node)
        if operands is None or not _transposed_rows(operands[1]) or not on_training_path(node):
            continue
        function = recording.function_of(node)
        if function in reported:
            continue
        reported.add(function)
        facts.manual.append(
            ManualItem(
                recording.line(recording_statement(recording, node)),
                f"{_short(node)} compares the samples of a batch with each other (a similarity matrix over the batch, as "
                "contrastive losses build): under DDP each rank compares only the samples of its own batch, so a sample's "
                "negatives are the other samples of its rank's batch, not of the whole step's batch",
                "to contrast across the ranks, gather every rank's rows first with their gradients "
                "(torch.cat(torch.distributed.nn.functional.all_gather(x)) for each operand) and size labels and masks by "
                "the gathered length; per-rank contrast is otherwise what each step averages",
            )
        )


def _matrix_product(recording: Recording, node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The two operands of ``a @ b``, ``torch.mm(a, b)``, ``torch.matmul(a, b)``, ``a.mm(b)``."""
    if isinstance(node, cst.BinaryOperation):
        return (node.left, node.right) if isinstance(node.operator, cst.MatrixMultiply) else None
    assert isinstance(node, cst.Call)
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    if recording.qualified(node) & _MATMULS and len(positional) == 2:
        return positional[0], positional[1]
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("mm", "matmul") and len(positional) == 1:
        if not recording.qualified(node.func.value):  # a tensor, not the torch module
            return node.func.value, positional[0]
    return None


def _transposed_rows(node: cst.BaseExpression) -> bool:
    """``x.t()``, ``x.T``, ``x.t().contiguous()``, ``x.transpose(0, 1)`` of a local variable or
    a computed value (``encoder(x).t()``): a batch's rows turned into columns (not
    ``k.transpose(-2, -1)``, attention's per-sample product, nor ``self.proj.weight.t()``, an
    attribute such as a parameter)."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "contiguous":
        node = node.func.value
    if isinstance(node, cst.Attribute):
        return node.attr.value == "T" and isinstance(node.value, (cst.Name, cst.Call))
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, (cst.Name, cst.Call))):
        return False
    name, args = node.func.attr.value, [code(a.value) for a in node.args]
    return name == "t" and not args or name == "transpose" and sorted(args) == ["0", "1"]


def _short(node: cst.CSTNode) -> str:
    text = " ".join(code(node).split())
    return text if len(text) <= 50 else text[:47] + "..."


# ---------------------------------------------------------------- the batch size in another file
def _report_handed_batch_size(recording: Recording, facts: Facts) -> None:
    split = {
        f.batch_expression: f
        for f in facts.loaders.values()
        if f.role in ("train", "decided") and f.batch_expression and f.batch_used_at is None
    }
    if not split:
        return
    reported: set[tuple[str, str]] = set()
    handed_models = facts.model_keys | {v.key for v in facts.loader_variables}
    for call in recording.reference_calls:
        helper = project_helper(recording, call)
        if helper is None or callee_name(call) in HARMLESS_CALLS:
            continue
        arguments = [code(a.value) for a in call.args if is_simple_reference(a.value)]
        for expression, fact in split.items():
            root = expression.split(".", 1)[0]
            if (helper, expression) in reported:
                continue
            direct = expression in arguments
            carried = "." in expression and root in arguments and _trains(helper, arguments, handed_models)
            if not (direct or carried) or (carried and not direct and not _may_read(recording, helper, expression)):
                continue
            reported.add((helper, expression))
            what = expression if direct else f"{root} (and with it {expression})"
            facts.manual.append(
                ManualItem(
                    recording.line(recording_statement(recording, call)),
                    f"{expression} is split across ranks by {fact.key or 'the DataLoader'} (line {fact.line}: each rank's "
                    f"batch is {expression} // world_size), and {what} goes to {helper}() of another file: code there that sizes "
                    f"tensors by {expression} (labels, masks, a loss over the batch) still sees the global size",
                    f"after the DataLoader is built, give that code the per-rank batch ({expression} //= ddpify.world_size()), "
                    "or keep the per-process batch (ddpify --per-process-batch) and scale the learning rate",
                )
            )


def _may_read(recording: Recording, helper: str, expression: str) -> bool:
    """The module that defines ``helper`` names the attribute (``batch_size`` of ``args.batch_size``),
    or cannot be read: glow's ``save_session(model, optim, args)`` never reads it."""
    home = recording.analysis.source.project.home_of(helper)
    try:
        return home is None or expression.rsplit(".", 1)[-1] in home.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True


def _trains(helper: str, arguments: list[str], handed: set[str]) -> bool:
    """A function of another file that trains or computes a loss: it is also given a model or
    a loader, or its name says so (``SimCLR``, ``NTXentLoss``, ``Trainer``)."""
    return any(a in handed for a in arguments) or any(word in helper.lower() for word in _TRAINS)


# ---------------------------------------------------------------- summed losses
def _report_sum_losses(recording: Recording, facts: Facts) -> None:
    if not any(f.role in ("train", "decided") for f in facts.loaders.values()) and not facts.helper_loaders:
        return
    source = recording.analysis.source
    reported: set[int] = set()
    for call in source.calls_by_callee.get("backward", []):
        if not isinstance(call.func, cst.Attribute):
            continue
        summed = _summed_loss(recording, call.func.value, call)
        if summed is None:
            continue
        line = recording.line(recording_statement(recording, summed))
        if line in reported:
            continue
        reported.add(line)
        loss = code(call.func.value)
        facts.manual.append(
            ManualItem(
                line,
                f"the loss is summed over the batch ({_how(recording, summed)}), not averaged: DDP averages the ranks' "
                "gradients, so with the global batch split across ranks each step's gradient is 1/world_size of what one "
                "process gets for the same batch",
                f"scale the summed loss by the number of ranks before backward ({loss} * ddpify.world_size()), or average it "
                "(reduction='mean') and retune the learning rate",
            )
        )


def _summed_loss(recording: Recording, loss: cst.BaseExpression, backward: cst.Call) -> cst.CSTNode | None:
    """The call that sums the loss ``backward`` runs on: ``F.mse_loss(..., reduction="sum")``,
    ``criterion(...)`` with ``criterion = nn.L1Loss(reduction="sum")``, ``loss_fn(...).sum()``
    for a ``reduction="none"`` loss; followed through the loss variable's assignments in the
    same function."""
    values: list[cst.BaseExpression] = [loss]
    if is_simple_reference(loss):
        function = recording.function_of(backward)
        values = [
            value
            for statement, value in recording.analysis.source.assignments.get(code(loss), [])
            if value is not None and recording.function_of(statement) is function
        ] or values
    for value in values:
        for call in of_types(value, cst.Call):
            if _reduction(recording, call) == "sum":
                return call
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "sum" and not call.args:
                if any(_reduction(recording, inner) == "none" for inner in of_types(call.func.value, cst.Call)):
                    return call
    return None


def _reduction(recording: Recording, call: cst.Call) -> str | None:
    """``"sum"`` / ``"none"`` / ``"mean"`` a loss call (or the criterion it calls) reduces by."""
    for candidate in [call, *_criteria(recording, call)]:
        reduction = keyword_value(candidate, "reduction")
        if isinstance(reduction, cst.SimpleString):
            return str(reduction.evaluated_value)
        size_average = keyword_value(candidate, "size_average")
        if isinstance(size_average, cst.Name) and size_average.value == "False":
            return "sum"
    return None


def _criteria(recording: Recording, call: cst.Call) -> list[cst.Call]:
    """``nn.MSELoss(reduction="sum")`` for ``criterion(out, y)`` (``criterion`` assigned it)."""
    if not is_simple_reference(call.func):
        return []
    values = recording.analysis.source.assignments.get(code(call.func), [])
    return [v for _, v in values if isinstance(v, cst.Call)]


def _how(recording: Recording, summed: cst.CSTNode) -> str:
    assert isinstance(summed, cst.Call)
    if isinstance(summed.func, cst.Attribute) and summed.func.attr.value == "sum":
        return "a reduction='none' loss, then .sum()"
    reduction = _reduction(recording, summed)
    return (
        "size_average=False"
        if reduction == "sum" and keyword_value(summed, "reduction") is None and not _criteria(recording, summed)
        else "reduction='sum'"
    )

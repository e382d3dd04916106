"""Calls that write something once per job: checkpoints (``torch.save``, ``ddpify.save``,
``accelerator.save``, a project's ``save_checkpoint``), loggers and event files, prints."""

from __future__ import annotations

import re

import libcst as cst

from ddpify.check.rule import Rule, short
from ddpify.convert import names
from ddpify.tree.cstutil import code, is_simple_reference

SAVE_FUNCTIONS = frozenset({"torch.save", "ddpify.runtime.save"})

IO_METHODS = frozenset(
    {
        "save_pretrained",
        "save_checkpoint",
        "save_model",
        "save_state",
        "add_scalar",
        "add_scalars",
        "add_image",
        "add_images",
        "add_histogram",
        "add_text",
        "add_figure",
    }
)


def singleton_io(rule: Rule, call: cst.Call) -> str | None:
    """What a call writes once per job (a checkpoint, a log, a line of output), or None."""
    qualified = rule.qualified(call)
    if is_save_call(rule, call):
        return f"{short(call.func)}(...)"
    if qualified & names.SUMMARY_WRITERS:
        return "SummaryWriter"
    if any(q.startswith(names.WANDB_PREFIX) for q in qualified):
        return "wandb"
    if any(q.startswith("mlflow.") for q in qualified):
        return "mlflow"
    if qualified & names.PRINT:
        return "print"
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in IO_METHODS:
        return call.func.attr.value
    return None


_SAVE_NAME = re.compile(r"^_*(save(_\w+)?|\w+_save)$")


def is_save_call(rule: Rule, call: cst.Call) -> bool:
    """``torch.save``, ``ddpify.save``, any ``<obj>.save(...)`` (accelerator, fabric, xm), or a
    project helper named like one (``save_checkpoint(state, is_best)``, ``self._save_model(...)``)."""
    if rule.qualified(call) & SAVE_FUNCTIONS:
        return True
    func = call.func
    last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return bool(_SAVE_NAME.match(last))


def root_name(node: cst.CSTNode) -> str | None:
    """``ckpt`` for ``ckpt``, ``ckpt["model"]``, ``state.ckpt``."""
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


# In-memory files: saving into one writes nothing to disk.
BUFFERS = frozenset({"io.BytesIO", "io.StringIO", "_io.BytesIO"})


def save_destination(call: cst.Call) -> cst.BaseExpression | None:
    """The file argument of ``torch.save(obj, f)``."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is None and index == 1) or (arg.keyword is not None and arg.keyword.value == "f"):
            return arg.value
    return None


def is_buffer(rule: Rule, destination: cst.BaseExpression) -> bool:
    """``io.BytesIO()``, directly or through the variable that holds it."""
    values = [destination]
    if is_simple_reference(destination):
        assigned = rule.file.analysis.source.assignments.get(code(destination), [])
        values = [v for _, v in assigned if v is not None] or values
    return all(isinstance(v, cst.Call) and rule.qualified(v) & BUFFERS for v in values)


def per_rank_path(rule: Rule, call: cst.Call) -> bool:
    """``ddpify.analysis.output.Output.per_rank_file``: a file per rank, as meant."""
    return rule.file.analysis.output.per_rank_file(call)

"""Rewrites of values each process would make for itself, and of output and downloads, as pure
functions of one node (the planners ``paths``, ``random_data``, ``device_args``, ``logs`` and
``fetches`` decide where; the transformer applies them through ``Facts.node_rewrites``).
Every piece of inserted code comes from ``templates/snippets.py.j2``; none of the results is
matched again, so converting twice changes nothing.
"""

from __future__ import annotations

import libcst as cst

from ddpify import snippets
from ddpify.convert.rewrites import RT, appended, keyword, main_process_only
from ddpify.tree.cstutil import code


def shared_temporary(call: cst.CSTNode, *, helper: str) -> cst.CSTNode:
    """``tempfile.mkdtemp(...)`` → ``ddpify.shared_mkdtemp(...)``, ``tempfile.TemporaryDirectory(...)``
    → ``ddpify.shared_temporary_directory(...)``: rank 0 creates the folder, every rank gets its
    name (same arguments)."""
    assert isinstance(call, cst.Call)
    return call.with_changes(func=snippets.expression(helper, rt=RT))


def rank_zero_logging(call: cst.CSTNode) -> cst.CSTNode:
    """``logging.basicConfig(...)`` → ``ddpify.rank_zero_logging(logging.basicConfig)(...)``, and so
    for ``dictConfig`` and handlers: rank 0 configures what the script asks for, the other ranks
    log warnings and errors to stderr and never open the log file."""
    assert isinstance(call, cst.Call)
    return call.with_changes(func=snippets.expression("rank_zero_logging", rt=RT, factory=code(call.func)))


def device_from(value: cst.CSTNode) -> cst.CSTNode:
    """``args.device`` → ``ddpify.device_from(args.device)``: this rank's GPU when the option
    names a CUDA device (under a launcher), the option's own value otherwise."""
    assert isinstance(value, cst.BaseExpression)
    return cst.Call(func=snippets.expression("device_from", rt=RT), args=[cst.Arg(value.with_changes(lpar=(), rpar=()))])


def mean_over_ranks(value: cst.CSTNode) -> cst.CSTNode:
    """``val_loss`` → ``ddpify.mean_over_ranks(val_loss)``: every rank sees the same metric."""
    assert isinstance(value, cst.BaseExpression)
    return cst.Call(func=snippets.expression("mean_over_ranks", rt=RT), args=[cst.Arg(value.with_changes(lpar=(), rpar=()))])


def times_world_size(value: cst.CSTNode) -> cst.CSTNode:
    """``x.size(0)`` → ``x.size(0) * ddpify.world_size()``: a count of every rank's samples."""
    assert isinstance(value, cst.BaseExpression)
    left = (
        value
        if isinstance(value, (cst.Call, cst.Subscript, cst.Name, cst.Attribute))
        else value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    )
    size = cst.Call(func=snippets.expression("world_size", rt=RT))
    return cst.BinaryOperation(left, cst.Multiply(), size)


def with_split_generator(call: cst.CSTNode, *, torch: str, seed: str = "0") -> cst.CSTNode:
    """``random_split(ds, lengths)`` → ``random_split(ds, lengths, generator=torch.Generator().manual_seed(0))``:
    the same split on every rank, whatever each rank's global generator holds."""
    assert isinstance(call, cst.Call)
    generator = keyword("generator", snippets.expression("split_generator", torch=torch, seed=seed))
    return call.with_changes(args=appended(call, generator))


def first_on_rank_zero(statement: cst.CSTNode) -> cst.CSTNode:
    """A download (or the ``if not os.path.exists(...)`` around it) under
    ``with ddpify.main_process_first():``: rank 0 runs it first, the others then find the files."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    block = snippets.statement("main_process_first", rt=RT)
    assert isinstance(block, cst.With) and isinstance(block.body, cst.IndentedBlock)
    return block.with_changes(
        leading_lines=statement.leading_lines,
        body=block.body.with_changes(body=[statement.with_changes(leading_lines=())]),
    )


def downloaded_by_rank_zero(statement: cst.CSTNode) -> cst.CSTNode:
    """``urlretrieve(url, path)`` → the same under ``with ddpify.main_process_first():`` and
    ``if ddpify.is_main_process():``: rank 0 downloads, the others wait for the finished file
    instead of downloading it again over the one rank 0 is already reading."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return first_on_rank_zero(main_process_only(statement))

"""Rewrites of values each process would make for itself, and of output and downloads, as pure
functions of one node (the planners ``paths``, ``random_data``, ``device_args``, ``logs`` and
``fetches`` decide where; the transformer applies them through ``Facts.node_rewrites``).
Every piece of inserted code comes from ``templates/snippets.py.j2``; none of the results is
matched again, so converting twice changes nothing.
"""

from __future__ import annotations

import libcst as cst

from ddpify import snippets
from ddpify.convert.rewrites import RT, keyword, main_process_only
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


def with_split_generator(call: cst.CSTNode, *, torch: str, seed: str = "0") -> cst.CSTNode:
    """``random_split(ds, lengths)`` → ``random_split(ds, lengths, generator=torch.Generator().manual_seed(0))``:
    the same split on every rank, whatever each rank's global generator holds."""
    assert isinstance(call, cst.Call)
    generator = keyword("generator", snippets.expression("split_generator", torch=torch, seed=seed))
    return appended(call, generator)


def appended(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` with ``arg`` last, laid out like the arguments before it: on a line of its own
    when they are (keeping a trailing comma), after ``, `` on one line."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[arg])
    last = args[-1]
    between = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else None
    if isinstance(last.comma, cst.Comma):  # f(\n    a,\n    b,\n)
        args[-1] = last.with_changes(comma=between or last.comma)
        args.append(arg.with_changes(comma=last.comma))
    else:
        comma = between or cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args[-1] = last.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace(""))
        args.append(arg.with_changes(whitespace_after_arg=last.whitespace_after_arg))
    return call.with_changes(args=args)


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

"""Web downloads on every rank: ``urllib.request.urlretrieve(url, path)``, ``requests.get(url)``,
``torch.hub.download_url_to_file``, ``wget.download``, ``gdown.download``, ``torch.hub.load``,
``hf_hub_download``... N processes fetch the same file at once, and those that write it write
over the file another rank is already reading.

Rank 0 goes first, as for ``download=True`` datasets (``downloads.py``):

- a download under an existence test (``if not os.path.exists(path):``): that whole ``if``
  goes under ``with ddpify.main_process_first():``, so the other ranks test after rank 0 has
  finished, find the file, and skip the download;
- a download into a file, as a statement of its own: under ``main_process_first`` *and*
  ``if ddpify.is_main_process():`` -- rank 0 downloads, the others wait for the finished file
  (``main_process_first`` also releases them when rank 0's download fails);
- a download into a file whose result is used (``path = wget.download(url, out)``): under
  ``main_process_first``, and reported: the other ranks then download again over rank 0's file;
- a download into memory or into a library cache: under ``main_process_first`` (the cache is
  filled once; the others fetch after rank 0 instead of all at once).

A download in code only rank 0 runs (a block moved under ``if ddpify.is_main_process():``, a
rank test) is left alone: ``main_process_first`` waits for every rank and would hang there.
"""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names, rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.planners.directories import tests_existence
from ddpify.convert.planners.rank_zero import (
    already_guarded,
    is_call_statement,
    must_run_everywhere,
    on_rank_zero_only,
    ordered_first,
    statement_line,
    statement_of,
)
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, keyword_value, of_types

# Methods a DataLoader calls per sample or batch, possibly in its worker processes.
_PER_SAMPLE = frozenset({"__getitem__", "__getitems__", "__iter__", "__next__", "collate_fn", "collate"})


def plan_existence_tests(recording: Recording, facts: Facts) -> None:
    """``if not os.path.exists(p): <download>``: the whole ``if`` under ``main_process_first``,
    also when the download sits in a write rank 0 alone will make (``with open(p, "w") as f:
    f.write(requests.get(url).text)``): the other ranks test after rank 0 and skip. Not when
    the ``if`` also runs a forward or a collective (rank 0 alone in it would hang). Runs before
    ``side_effects``, which then knows the readers of that file wait."""
    for call in recording.write_calls:
        if _kind(recording.qualified(call)) is None or _ordered_already(recording, call) or already_guarded(recording, call):
            continue
        statement = statement_of(recording, call)
        test = _existence_test(recording, facts, statement) if isinstance(statement, cst.SimpleStatementLine) else None
        if test is not None and statement not in facts.downloads and must_run_everywhere(recording, facts, test) is None:
            _plan(
                facts,
                test,
                rewrites_io.first_on_rank_zero,
                f"{code(call.func)}(...) under an existence test: the `if` runs on rank 0 first, under ddpify.main_process_first(); "
                "the other ranks then find the file and skip the download",
            )


def plan(recording: Recording, facts: Facts) -> None:
    """Put each other download outside rank-0-only code under ``ddpify.main_process_first()``."""
    for call in recording.write_calls:
        qualified = recording.qualified(call)
        kind = _kind(qualified)
        if kind is None or _ordered_already(recording, call) or on_rank_zero_only(recording, facts, call):
            continue
        statement = statement_of(recording, call)
        if not isinstance(statement, cst.SimpleStatementLine) or statement in facts.downloads or ordered_first(recording, facts, call):
            continue
        what = code(call.func)
        blocker = must_run_everywhere(recording, facts, statement)
        if blocker is not None:
            facts.manual.append(
                ManualItem(
                    statement_line(recording, statement),
                    f"{what}(...) downloads on every rank, and its statement also calls {blocker}, which every rank must run",
                    "download on a line of its own under `with ddpify.main_process_first():`, then compute",
                )
            )
            continue
        target = _destination(call, qualified) if kind == "file" else None
        if target is not None and is_call_statement(statement, call):
            _plan(
                facts,
                statement,
                rewrites_io.downloaded_by_rank_zero,
                f"{what}(...) downloads {code(target)} on rank 0 only (under ddpify.main_process_first() and "
                "`if ddpify.is_main_process():`): the other ranks wait for the finished file",
            )
            continue
        _plan(
            facts,
            statement,
            rewrites_io.first_on_rank_zero,
            f"{what}(...) runs on rank 0 first, under ddpify.main_process_first()",
        )
        if target is not None:
            facts.manual.append(
                ManualItem(
                    statement_line(recording, statement),
                    f"{what}(...) writes {code(target)}, and its result is used: after rank 0, every other rank downloads it again "
                    "over the file rank 0 may be reading",
                    f"inside the `with ddpify.main_process_first():` block, download only `if not os.path.exists({code(target)}):`",
                )
            )


def _plan(facts: Facts, unit: cst.CSTNode, rewrite: object, what: str) -> None:
    if unit not in facts.node_rewrites:
        facts.node_rewrites[unit] = NodeRewrite(rewrite, what)  # type: ignore[arg-type]


def _kind(qualified: set[str]) -> str | None:
    if qualified & names.FILE_FETCHES.keys():
        return "file"
    if qualified & names.MEMORY_FETCHES:
        return "memory"
    return "cached" if qualified & names.CACHED_FETCHES else None


def _destination(call: cst.Call, qualified: set[str]) -> cst.BaseExpression | None:
    """The file a download writes (``urlretrieve(url, path)``'s ``path``); None when it picks a
    temporary file of its own (one per process: nothing shared to protect)."""
    position, keyword = next(names.FILE_FETCHES[q] for q in qualified if q in names.FILE_FETCHES)
    given = keyword_value(call, keyword)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return given if given is not None else positional[position] if len(positional) > position else None


def _ordered_already(recording: Recording, call: cst.Call) -> bool:
    """Inside ``with ...main_process_first...:`` (the script orders the ranks itself), or in a
    dataset's code (``__getitem__`` fetching a sample, maybe in a loader worker process): each
    rank fetches its own shard there, and a barrier per sample (in a worker) would break."""
    function, klass = recording.owners_of(call)
    if (
        function is not None
        and function.name.value in _PER_SAMPLE
        or klass is not None
        and any("Dataset" in code(b.value) for b in klass.bases)
    ):
        return True
    for ancestor in recording.ancestors(call):
        if isinstance(ancestor, cst.With) and any("main_process_first" in code(i.item) for i in ancestor.items):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


def _existence_test(recording: Recording, facts: Facts, statement: cst.SimpleStatementLine) -> cst.If | None:
    """The innermost ``if`` around ``statement`` (in its function) that tests whether a file
    exists (``os.path.exists``, ``isfile``, ``Path.exists()``...), when it is a statement of its
    own (not an ``elif``), runs on every rank, and holds no ``download=True`` statement (which
    gets its own ``main_process_first``)."""
    for ancestor in recording.ancestors(statement):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(ancestor, cst.If) and tests_existence(recording, ancestor.test):
            if isinstance(recording.parent(ancestor), cst.If) or on_rank_zero_only(recording, facts, ancestor):
                return None
            if any(s in facts.downloads for s in of_types(ancestor, cst.SimpleStatementLine)):
                return None
            return ancestor
    return None


def plan_directory_helpers(recording: Recording, facts: Facts) -> None:
    """``prepare_dirs(config)``, a function of the project's modules that creates directories
    or a file it first tests for (``Helper.makes_paths``: ``vocab, train, dev = build_dataset(
    config)`` that builds and pickles the vocabulary when it is missing), called as a statement
    on every rank (also into names): under ``ddpify.main_process_first()``, rank 0 creates them
    first and the other ranks find them (an exists-then-makedirs in it raced: FileExistsError on
    a rank that lost; a rank read another's half-written file). Not when the helper trains or
    runs a collective (rank 0 alone in it would hang)."""
    project = recording.analysis.source.project
    for call in recording.analysis.source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        helper = project.helper(call)
        if helper is None or not helper.makes_paths or helper.trains or helper.collective is not None:
            continue
        statement = statement_of(recording, call)
        if not isinstance(statement, cst.SimpleStatementLine) or not (is_call_statement(statement, call) or _assigned(statement, call)):
            continue
        if _ordered_already(recording, call) or already_guarded(recording, call) or statement in facts.node_rewrites:
            continue
        if statement in facts.main_process_only or statement in facts.rank_zero_helpers or call in facts.rank_zero_clients:
            continue  # rank 0 runs it alone (an output helper, a writer built on rank 0): nothing for the others to find
        _plan(
            facts,
            statement,
            rewrites_io.first_on_rank_zero,
            f"{code(call.func)}() (another file) creates directories or files it first tests for: it runs on rank 0 first, "
            "under ddpify.main_process_first(); the other ranks then find them",
        )


def _assigned(statement: cst.SimpleStatementLine, call: cst.Call) -> bool:
    """``vocab, train, dev = build_dataset(config)``: the statement only binds the call's result."""
    return len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign) and statement.body[0].value is call

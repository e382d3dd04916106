"""Rows about the run itself and its side effects: it completes, checkpoints come from one rank
and hold plain state dicts, files and log lines come from one rank, no rank hangs."""

from __future__ import annotations

import os
import re

from ddpify.verify.records import Event, Outcome, Records
from ddpify.verify.row import FAIL, NA, PASS, Row

__all__ = ["rows"]


def rows(records: Records, outcome: Outcome) -> list[Row]:
    return [run(records, outcome), checkpoints(records), writes(records), hang(records, outcome)]


# What a rank raises because another one went away in the middle of a collective (its
# connections closed, or it stopped answering): the consequence, never the cause.
_PEER_GONE = re.compile(
    r"Connection (closed|reset) by peer|Broken pipe|DistBackendError|DistNetworkError|\bgloo\b|\bNCCL\b|timed out", re.I
)


def _first_error(records: Records) -> str:
    """The error that says what failed: the first rank's, unless it only lost its peers while
    another rank raised its own (AnoGAN: rank 1's FileNotFoundError, rank 0's gloo 'Connection
    closed by peer')."""
    errors = [(rank, event) for rank in records.ranks for event in records.of(rank, "error")]
    errors.sort(key=lambda found: bool(_PEER_GONE.search(f"{found[1]['type']}: {found[1]['message']}")))
    for rank, event in errors[:1]:
        return f"rank {rank}: {event['type']}: {event['message'].splitlines()[0] if event['message'] else ''} (at {event['at']})"
    return ""


# What PyTorch's gloo teardown prints when it aborts a process after the script is done (a
# peer closed its connections while messages were in flight): no error of the script's.
_TEARDOWN_ABORT = "terminate called without an active exception"
# The launcher's own summary lines around a failure: never the cause.
_BANNER = re.compile(r"^\s*([=\-]+|.*(Root Cause|Failures:|<NO_OTHER_FAILURES>|error_file|To enable traceback|traceback\s*:).*)?\s*$")


def _cause(tail: list[str]) -> str:
    """The last line of the output that says what failed: an error or the teardown abort, else
    the last line that is not the launcher's banner."""
    meaningful = [line.strip() for line in tail if not _BANNER.match(line)]
    telling = [line for line in meaningful if "Error" in line or "Exception" in line or _TEARDOWN_ABORT in line]
    return (telling or meaningful or ["no output"])[-1]


def run(records: Records, outcome: Outcome) -> Row:
    missing = [r for r in range(outcome.nproc) if r not in records.started()]
    if outcome.timed_out:
        return Row("run", FAIL, f"killed after {outcome.timeout:.0f} s without progress (see the hang row)")
    everyone_ended = not missing and set(records.ended()) == set(range(outcome.nproc))
    failed = any(records.of(rank, "error") for rank in records.ranks)
    torn_down = outcome.returncode != 0 and everyone_ended and not failed and _TEARDOWN_ABORT in outcome.output_tail
    if (outcome.returncode != 0 and not torn_down) or missing:
        tail = outcome.output_tail.strip().splitlines()
        error = _first_error(records) or _cause(tail)
        started = f"; ranks {missing} never started" if missing else ""
        return Row("run", FAIL, f"exit code {outcome.returncode}{started}; {error}")
    note = (
        f"; then PyTorch's gloo teardown aborted a process ({_TEARDOWN_ABORT}, exit code {outcome.returncode}): not the script's doing"
        if torn_down
        else ""
    )
    return Row("run", PASS, _ran(records, outcome, "every rank ran to its end on" if torn_down else "exit 0 on") + note)


def _ran(records: Records, outcome: Outcome, ended: str) -> str:
    """How far a run that raised nothing went: stopped by ``--steps``, or its steps per rank."""
    stopped = [e["step"] for r in records.ranks for e in records.of(r, "stop")]
    if stopped:
        main = records.main_optimizer(records.ranks[0])
        if main:
            return f"stopped on every rank after {stopped[0]} steps of {main} (--steps {outcome.steps})"
        return f"stopped after {stopped[0]} optimizer steps on every rank (--steps {outcome.steps})"
    counts = {rank: records.count_steps(rank) for rank in records.ranks}
    if len(set(counts.values())) == 1:
        return f"{ended} {outcome.nproc} ranks, {counts[records.ranks[0]]} each"
    return f"{ended} {outcome.nproc} ranks; " + "; ".join(f"rank {r}: {c}" for r, c in counts.items())


def checkpoints(records: Records) -> Row:
    """Each file saved with torch.save by one rank; no ``module.`` keys; no DDP objects."""
    guards = records.guards("checkpoints")
    by_path: dict[str, dict[int, Event]] = {}
    for rank, events in records.every("save").items():
        for event in events:
            by_path.setdefault(event["path"], {}).setdefault(rank, event)
    if not by_path and not guards:
        return Row("checkpoints", NA, "no torch.save / ddpify.save")
    problems = list(guards)
    for path, per_rank in sorted(by_path.items()):
        name = os.path.basename(path)
        first = next(iter(per_rank.values()))
        if len(per_rank) > 1:
            problems.append(f"{name} ({first['site']}) saved by ranks {sorted(per_rank)}: save on rank 0 only")
        keys = [k for e in per_rank.values() for k in e.get("module_keys", [])]
        if keys:
            problems.append(f"{name} has DDP 'module.' keys ({keys[0]}, ...): save model.module.state_dict()")
        ddp = [o for e in per_rank.values() for o in e.get("ddp_objects", [])]
        if ddp:
            problems.append(f"{name} holds a DistributedDataParallel object ({ddp[0]}): save the state dict of model.module")
    if problems:
        return Row("checkpoints", FAIL, "; ".join(problems))
    names = ", ".join(sorted({os.path.basename(p) for p in by_path}))
    ranks = sorted({r for per_rank in by_path.values() for r in per_rank})
    return Row("checkpoints", PASS, f"{len(by_path)} file(s) ({names}) saved by rank {'/'.join(map(str, ranks))} only, plain keys")


def _tagged(texts: dict[int, str]) -> bool:
    """Lines of several ranks that each name their own rank ("[rank 1] loss ...")."""
    return len(set(texts.values())) == len(texts) and all(re.search(rf"(?<![\d.]){rank}(?![\d.])", text) for rank, text in texts.items())


def writes(records: Records) -> Row:
    """Files opened for writing, and print/log sites, each by one rank (or tagged per rank)."""
    files: dict[str, dict[int, Event]] = {}
    for rank, events in records.every("write").items():
        for event in events:
            files.setdefault(event["path"], {})[rank] = event
    lines: dict[str, dict[int, str]] = {}
    kinds: dict[str, str] = {}
    for kind in ("print", "log"):
        for rank, events in records.every(kind).items():
            for event in events:
                lines.setdefault(event["site"], {}).setdefault(rank, event["text"])
                kinds[event["site"]] = kind
    counts = {rank: (records.of(rank, "line-counts") or [{"counts": {}}])[-1]["counts"] for rank in records.ranks}
    if not files and not lines:
        return Row("writes", NA, "no file written, nothing printed or logged")
    problems: list[str] = []
    for path, per_rank in sorted(files.items()):
        if len(per_rank) > 1:
            site = next(iter(per_rank.values()))["site"]
            problems.append(f"{os.path.basename(path)} opened for writing on ranks {sorted(per_rank)} ({site})")
    tagged = 0
    for site, texts in sorted(lines.items()):
        if len(texts) < 2:
            continue
        if _tagged(texts):
            tagged += 1
            continue
        each = "/".join(str(counts[r].get(site, "?")) for r in sorted(texts))
        problems.append(f"{kinds[site]} at {site} on ranks {sorted(texts)} ({each} lines), e.g. {texts[min(texts)][:60]!r}")
    if problems:
        return Row("writes", FAIL, "; ".join(problems))
    extra = f", {tagged} tagged per rank" if tagged else ""
    return Row("writes", PASS, f"{len(files)} file(s) and {len(lines)} print/log site(s), each from one rank{extra}")


def _collectives(records: Records) -> dict[int, list[Event]]:
    """Per rank, the collectives entered (in order), each with whether it was left."""
    out: dict[int, list[Event]] = {}
    for rank, events in records.every("coll").items():
        entered: dict[int, Event] = {}
        for event in events:
            if event.get("ph") == "in":
                entered[event["n"]] = {**event, "left": False}
            elif event["n"] in entered:
                entered[event["n"]]["left"] = True
        out[rank] = [entered[n] for n in sorted(entered)]
    return out


def _describe(event: Event, position: int) -> str:
    return f"{event['op']} at {event['site']} (its collective #{position + 1})"


def hang(records: Records, outcome: Outcome) -> Row:
    """The ranks enter the same collectives and barriers in the same order, and none is left
    waiting in one: a hung run is named by where each rank was."""
    guards = records.guards("hang")
    sequences = _collectives(records)
    inside = {rank: (len(seq) - 1, seq[-1]) for rank, seq in sequences.items() if seq and not seq[-1]["left"]}
    where_ = "; ".join(f"rank {r} in {_describe(e, i)}" for r, (i, e) in sorted(inside.items()))
    if outcome.timed_out:
        quiet = [r for r in range(outcome.nproc) if r not in inside]
        others = f"; rank(s) {quiet} in no collective" if quiet else ""
        return Row("hang", FAIL, f"no progress for {outcome.timeout:.0f} s, killed: {where_ or 'no rank in a collective'}{others}")
    if guards:
        return Row("hang", FAIL, " / ".join(guards))
    ops = {rank: [e["op"] for e in seq] for rank, seq in sequences.items()}
    if ops and len({tuple(o) for o in ops.values()}) > 1:
        position = next((i for i in range(max(map(len, ops.values()))) if len({tuple(o[i : i + 1]) for o in ops.values()}) > 1), 0)
        at = "; ".join(
            f"rank {r} {_describe(seq[position], position) if position < len(seq) else 'none'}" for r, seq in sorted(sequences.items())
        )
        counts = "/".join(str(len(o)) for _, o in sorted(ops.items()))
        return Row("hang", FAIL, f"the ranks entered different collectives ({counts} in all); first difference: {at}")
    if inside and outcome.returncode != 0:
        return Row("hang", FAIL, f"the run ended with {where_}")
    if not ops or not any(ops.values()):
        return Row("hang", NA, "no collective or barrier called by the script or the runtime")
    return Row("hang", PASS, f"{len(next(iter(ops.values())))} collective(s)/barrier(s), in the same order on every rank")

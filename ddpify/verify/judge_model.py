"""Rows about models and randomness: wrapped, forward through the wrapper, parameters in sync,
per-rank RNG streams once training runs, identical model init and generated data."""

from __future__ import annotations

from ddpify.verify.records import Event, Records
from ddpify.verify.row import FAIL, NA, PASS, Row

__all__ = ["rows"]


def rows(records: Records) -> list[Row]:
    return [wrapped(records), forward(records), params(records), rng(records), init(records)]


def _wraps(records: Records) -> dict[int, Event]:
    return {event["id"]: event for event in records.of(records.ranks[0], "wrap")} if records.ranks else {}


def _model(wraps: dict[int, Event], ident: object) -> str:
    event = wraps.get(int(str(ident)))
    return f"{event['model']} ({event['site']})" if event else f"model #{ident}"


def wrapped(records: Records) -> Row:
    """Every parameter an optimizer updates belongs to a DDP-wrapped model, on its own device,
    and no wrapped model moved afterwards."""
    guards = records.guards("wrapped")
    optimizers = records.of(records.ranks[0], "optimizer") if records.ranks else []
    if not optimizers and not guards:
        return Row("wrapped", NA, "no optimizer step")
    wraps = _wraps(records)
    problems = guards + [
        f"{o['kind']} ({o['site']}) updates {o['unwrapped']} parameter tensor(s) of {o['owner']}, which is not wrapped "
        f"in DistributedDataParallel: its gradients are never averaged across ranks"
        for o in optimizers
        if o.get("unwrapped")
    ]
    devices = {rank: [e["device"] for e in records.of(rank, "wrap")] for rank in records.ranks}
    shared = [d for d in {d for ds in devices.values() for d in ds} if d.startswith("cuda") and sum(d in ds for ds in devices.values()) > 1]
    if shared:
        problems.append(f"several ranks train on {', '.join(sorted(shared))}: each rank needs its own GPU")
    if problems:
        return Row("wrapped", FAIL, "; ".join(problems))
    if not wraps:
        return Row("wrapped", FAIL, "no model is wrapped in DistributedDataParallel, yet an optimizer steps")
    placed = ", ".join(f"{_model(wraps, i)} on {'/'.join(sorted({ds[i] for ds in devices.values() if i < len(ds)}))}" for i in wraps)
    return Row("wrapped", PASS, f"{placed}; the optimizers update wrapped parameters only")


def forward(records: Records) -> Row:
    """Every step of an optimizer that updates a wrapped model followed a forward through it."""
    guards = records.guards("forward")
    if guards:
        return Row("forward", FAIL, " / ".join(guards))
    wraps = _wraps(records)
    bypassed: list[tuple[int, str, str]] = []
    for rank in records.ranks:
        found = []
        for step in records.of(rank, "step"):
            for ident, (forwards, grads) in step.get("w", {}).items():
                if forwards == 0 and grads:
                    found.append((step["n"], ident, step.get("bypass", {}).get(ident, "")))
        bypassed = bypassed or [(n, i, how) for n, i, how in found]  # the first rank that has any
    if not records.ranks or not any(step.get("w") for step in records.of(records.ranks[0], "step")):
        return Row("forward", NA, "no optimizer step updated a wrapped model")
    if bypassed:
        n, ident, how = bypassed[0]
        more = f" (and {len(bypassed) - 1} more)" if len(bypassed) > 1 else ""
        detail = f": {how} outside the wrapper" if how else ""
        return Row(
            "forward",
            FAIL,
            f"step {n}{more}: {_model(wraps, ident)} had gradients but no forward through its DDP wrapper since the "
            f"previous step, so they were not averaged{detail}",
        )
    counted = records.count_steps(records.ranks[0], wrapped_only=True)
    return Row("forward", PASS, f"{counted} on rank 0, each after a forward through the wrapper")


def params(records: Records) -> Row:
    """Wrapped models' parameters hash the same on every rank after step 1 and at the end."""
    wraps = _wraps(records)
    seen: dict[str, dict[str, dict[int, str]]] = {}  # when -> model -> rank -> digest
    for rank, events in records.every("params").items():
        for event in events:
            for ident, digest in event.get("digests", {}).items():
                if digest is not None:
                    seen.setdefault(event["when"], {}).setdefault(ident, {})[rank] = digest
    if not seen:
        return Row("params", NA, "no wrapped model was stepped")
    problems: list[str] = []
    checked: list[str] = []
    for when in ("step 1", "end"):
        for ident, digests in seen.get(when, {}).items():
            if len(digests) < records.world:
                continue
            checked.append(when)
            if len(set(digests.values())) > 1:
                problems.append(f"{_model(wraps, ident)} differs between ranks {'after step 1' if when == 'step 1' else 'at the end'}")
    if problems:
        return Row("params", FAIL, "; ".join(problems) + " (gradients not averaged, or parameters changed on one rank)")
    if not checked:
        return Row("params", NA, "parameters were not recorded on every rank")
    return Row("params", PASS, f"same hash on every rank after {' and at the '.join(dict.fromkeys(checked))}")


def rng(records: Records) -> Row:
    """Where the script draws randomness between two steps of one epoch (dropout, augmentation),
    the RNG states must differ between ranks, or every rank applies the same noise to its own
    shard. Not judged where neither a training loader splits the data nor a per-rank draw picks
    the batches (``rank-seeds``: the runtime switched to seed + rank): a full-graph step on every
    rank, where the same noise is what one process computes, and what the converter keeps."""
    steps = {rank: {s["n"]: s for s in records.main_steps(rank)} for rank in records.ranks}
    if not records.ranks or not steps[records.ranks[0]]:
        return Row("rng", NA, "no optimizer step")
    first = steps[records.ranks[0]]
    drawn: dict[str, int] = {}
    identical: dict[str, int] = {}
    for n in sorted(first):
        before = first.get(n - 1)
        if before is None or before.get("pass") != first[n].get("pass"):
            continue  # a new DataLoader pass draws its own seed in between
        for kind, digest in first[n].get("rng", {}).items():
            if before.get("rng", {}).get(kind) == digest:
                continue
            drawn[kind] = drawn.get(kind, 0) + 1
            same = all(n in per and per[n].get("rng", {}).get(kind) == digest for per in steps.values())
            identical[kind] = identical.get(kind, 0) + (same and records.world > 1)
    if not drawn:
        return Row("rng", NA, "the global RNGs (torch, numpy, random) draw nothing between training steps")
    if not records.training_passes() and not any(records.every("rank-seeds").values()):
        return Row(
            "rng",
            NA,
            "no training loader splits the data and no batch is drawn per rank: every rank may compute the one-process "
            "step, where the same draws on every rank are right (ddpify.seed keeps one stream until batches differ per rank)",
        )
    main = records.main_optimizer(records.ranks[0])
    which = f" (steps of {main})" if main else ""  # the training steps, when several optimizers step
    shared = [k for k in drawn if identical.get(k)]
    if shared:
        detail = ", ".join(f"{k} at {identical[k]} of {drawn[k]} steps" for k in shared) + which
        return Row(
            "rng",
            FAIL,
            f"same RNG state on every rank while training draws from it ({detail}): every rank gets the same dropout/"
            f"augmentation noise; seed each rank differently once the model is built (ddpify.seed does)",
        )
    return Row("rng", PASS, "different on every rank: " + ", ".join(f"{k} ({n} steps drew)" for k, n in drawn.items()) + which)


def init(records: Records) -> Row:
    """Generated datasets identical on every rank; model parameters before DDP's broadcast too
    (a difference there is harmless for the wrapped model, and reported as a note)."""
    problems: list[str] = []
    notes: list[str] = []
    datasets = records.every("dataset")
    for event in datasets.get(records.ranks[0], []) if records.ranks else []:
        digests = {rank: next((e["digest"] for e in events if e["n"] == event["n"]), None) for rank, events in datasets.items()}
        if len(digests) == records.world and len(set(digests.values())) > 1:
            problems.append(
                f"TensorDataset #{event['n']} ({event['site']}, {event['length']} samples) differs between ranks: each rank "
                f"generated its own data; seed the same on every rank before generating it"
            )
    if datasets.get(records.ranks[0] if records.ranks else 0):
        notes.append(f"{len(datasets[records.ranks[0]])} generated TensorDataset(s) identical")
    wraps = records.every("wrap")
    for event in wraps.get(records.ranks[0], []) if records.ranks else []:
        before = {rank: next((e["before"] for e in events if e["id"] == event["id"]), None) for rank, events in wraps.items()}
        if len(set(before.values())) > 1:
            notes.append(f"{event['model']} initialised differently per rank, made rank 0's by DDP's broadcast (harmless)")
        else:
            notes.append(f"{event['model']} initialised identically")
    if problems:
        return Row("init", FAIL, "; ".join(problems))
    if not notes:
        return Row("init", NA, "no generated dataset and no wrapped model")
    return Row("init", PASS, "; ".join(notes))

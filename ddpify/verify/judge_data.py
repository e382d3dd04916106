"""Rows about the training data: shards, reshuffling, global batch, random index draws.

A training loader is one with a pass during which an optimizer stepped; loaders are matched
across ranks by construction order, passes by their number.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ddpify.verify.records import Event, Records
from ddpify.verify.row import FAIL, NA, PASS, Row

__all__ = ["rows"]


def rows(records: Records, single: Records | None) -> list[Row]:
    return [shards(records), reshuffle(records), batch(records, single), draws(records)]


def _name(loader: Event) -> str:
    length = loader.get("length")
    return f"loader #{loader['id']} ({loader.get('dataset')}{f' of {length}' if length is not None else ''}, {loader.get('site')})"


def _indices(event: Event) -> list[int]:
    return [i for i in event.get("indices", []) if i is not None]


def _epochs(count: int) -> str:
    return f"{count} epoch{'s' if count != 1 else ''}"


def shards(records: Records) -> Row:
    """Each training pass: the ranks' indices are disjoint and, when the pass ran to its end,
    together cover the dataset (DistributedSampler's padding and drop_last allowed for)."""
    passes, loaders = records.training_passes(), records.loaders()
    if not passes:
        return Row("shards", NA, "no DataLoader was iterated while an optimizer stepped")
    problems: list[str] = []
    notes: list[str] = []
    for ident, by_number in sorted(passes.items()):
        loader = loaders.get(ident, {"id": ident})
        failure, note = _judge_loader(loader, by_number, records.world)
        if failure:
            problems.append(f"{_name(loader)}: {failure}")
        elif note:
            notes.append(f"{_name(loader)}: {note}")
    if problems:
        return Row("shards", FAIL, "; ".join(problems))
    return Row("shards", PASS if notes else NA, "; ".join(notes) or "no pass with indices to compare")


def _judge_loader(loader: Event, by_number: dict[int, dict[int, Event]], world: int) -> tuple[str, str]:
    """(failure, evidence) for one training loader over its passes."""
    length = loader.get("order_length", loader.get("length"))  # a subset sampler reads its subset
    sizes: list[int] = []
    complete_passes = partial_passes = 0
    for number, per_rank in sorted(by_number.items()):
        if len(per_rank) < world:
            continue
        shards_ = {rank: _indices(event) for rank, event in per_rank.items()}
        if not any(shards_.values()):
            return "", "no indices (an IterableDataset shards itself)"
        if loader.get("replacement") or any(len(set(s)) < len(s) for s in shards_.values()):  # drawing with replacement
            if all(s == shards_[0] for s in shards_.values()):
                return f"epoch {number}: every rank drew the same samples ({len(shards_[0])} of them)", ""
            continue
        counts = Counter(i for shard in shards_.values() for i in shard)
        twice = [i for i, c in counts.items() if c > 1]
        complete = all(e.get("complete") and not e.get("truncated") for e in per_rank.values())
        padding = world - 1 if complete and len({len(s) for s in shards_.values()}) == 1 else 0
        if len(twice) > padding:
            every = all(len(set(s)) == len(counts) for s in shards_.values())
            how = "every rank read every index it fetched (no DistributedSampler?)" if every else "the shards overlap"
            return f"epoch {number}: {len(twice)} indices read by more than one rank, {how}", ""
        if complete and length:
            missing = length - len(counts)
            allowed = world * (loader.get("batch_size") or 1) + world if (loader.get("drop_last") or loader.get("sampler_drop_last")) else 0
            if missing > allowed:
                return f"epoch {number}: {missing} of {length} indices read by no rank", ""
        if complete:
            complete_passes += 1
            sizes = sizes or [len(shards_[r]) for r in sorted(shards_)]
        else:
            partial_passes += 1
    if not complete_passes and not partial_passes:
        return "", ""
    if not complete_passes:
        return "", "disjoint so far; cover not checked: the run stopped inside the first epoch"
    cover = f"cover all {length}" if length else "cover not checked: the dataset has no length"
    cut = ", the last one stopped early" if partial_passes else ""
    return "", f"{_epochs(len(by_number))}{cut}, shards of {'+'.join(map(str, sizes))}, disjoint, {cover}"


def reshuffle(records: Records) -> Row:
    """Consecutive passes of a training loader read a different order on each rank."""
    passes, loaders = records.training_passes(), records.loaders()
    problems: list[str] = []
    notes: list[str] = []
    for ident, by_number in sorted(passes.items()):
        numbers = sorted(n for n, per_rank in by_number.items() if len(per_rank) == records.world)
        loader = loaders.get(ident, {"id": ident})
        if len(numbers) < 2:
            continue
        if all(_in_order([_indices(by_number[n][r]) for r in sorted(by_number[n])], records.world) for n in numbers):
            notes.append(f"{_name(loader)}: read in order, not shuffled (as the script asks)")
            continue  # every pass in order: a shuffled set of 4 may come out in order once, not every time
        same = []
        for a, b in zip(numbers, numbers[1:], strict=False):
            orders = [(_indices(by_number[a][r]), _indices(by_number[b][r])) for r in by_number[a]]
            if all(x[: min(len(x), len(y))] == y[: min(len(x), len(y))] for x, y in orders):
                same.append(f"{a}->{b}")
        if same:
            problems.append(
                f"{_name(loader)}: epochs {', '.join(same)} read the same order on every rank (set_epoch not called on the sampler?)"
            )
        else:
            notes.append(f"{_name(loader)}: a new order in each of {_epochs(len(numbers))}, one permutation split across ranks")
    if problems:
        return Row("reshuffle", FAIL, "; ".join(problems))
    if notes:
        return Row("reshuffle", PASS, "; ".join(notes))
    return Row("reshuffle", NA, "fewer than two epochs of a training loader observed")


def _in_order(shards: list[list[int]], world: int) -> bool:
    """The ranks' shards interleaved (rank 0's first, rank 1's first, ...) never go down, but
    for DistributedSampler's padding at the end: a sequential sampler, not shuffled."""
    merged = [shard[i] for i in range(max(map(len, shards), default=0)) for shard in shards if i < len(shard)]
    rising = next((i for i in range(1, len(merged)) if merged[i] < merged[i - 1]), len(merged))
    return rising >= len(merged) - (world - 1)


def batch(records: Records, single: Records | None) -> Row:
    """Global batch (sum of the ranks' batches) against the script as one process."""
    passes, loaders = records.training_passes(), records.loaders()
    if not passes:
        return Row("batch", NA, "no training loader")
    one = _single_batches(single) if single is not None else {}
    problems: list[str] = []
    notes: list[str] = []
    for ident, by_number in sorted(passes.items()):
        loader = loaders.get(ident, {"id": ident})
        per_rank = by_number[min(by_number)]
        if len(per_rank) < records.world or not all(e.get("batches") for e in per_rank.values()):
            continue
        firsts = [per_rank[r]["batches"][0] for r in sorted(per_rank)]
        counts = {r: len(e["batches"]) for r, e in per_rank.items() if e.get("complete")}
        if len(counts) == records.world and len(set(counts.values())) > 1:
            problems.append(f"{_name(loader)}: ranks take different numbers of batches per epoch {counts}")
            continue
        total = sum(firsts)
        split = f"global batch {total} = {' + '.join(map(str, firsts))}"
        reference, source = _reference(loader, one.get(ident))
        if reference is None:
            notes.append(f"{_name(loader)}: {split}; not compared (no single-process batch known; --compare runs one)")
        elif loader.get("per_process_batch") and total != reference:
            failure, note = _per_process(records, loader, split, f"{reference} as one process ({source})")
            (problems if failure else notes).append(f"{_name(loader)}: {failure or note}")
        elif total != reference:
            problems.append(f"{_name(loader)}: {split}, but {reference} as one process ({source})")
        else:
            notes.append(f"{_name(loader)}: {split}, as {reference} with one process ({source})")
    if problems:
        return Row("batch", FAIL, "; ".join(problems))
    compared = [n for n in notes if "not compared" not in n]
    return Row("batch", PASS if compared else NA, "; ".join(notes) or "no batch recorded")


def _per_process(records: Records, loader: Event, split: str, one: str) -> tuple[str, str]:
    """(failure, note) for a loader that keeps the per-process batch: right only where the run
    built tensors of that batch's length during training (``hooks_batch``), or a wrapped model
    holds a parameter of the script's own modules with that leading size (``hooks_model``:
    Glow's prior), which splitting the batch would break; else the optimisation changed for a
    reason that did not hold."""
    length = loader.get("batch_size")
    built = sorted(
        {f"{e['fn']} at {e['site']}" for events in records.every("batch-sized").values() for e in events if e.get("length") == length}
    )
    held = sorted({e["model"] for events in records.every("wrap").values() for e in events if length in e.get("leading", ())})
    if built or held:
        sized = f"tensors built in training ({', '.join(built)})" if built else f"a parameter of {', '.join(held)}"
        return "", f"{split}, but {one}: per-process batch kept at conversion, as the batch's length {length} sizes {sized}"
    return (
        f"{split}, but {one}: per-process batch kept at conversion, yet no tensor built in training has the batch's length "
        f"{length}, so nothing needed it: split the batch (the default conversion), or scale the learning rate if you chose it",
        "",
    )


def _reference(loader: Event, measured: int | None) -> tuple[int | None, str]:
    if measured is not None:
        return measured, "measured by --compare"
    if loader.get("single_batch") is not None:
        return loader["single_batch"], "the batch_size given to ddpify.distributed_loader"
    return None, ""


def _single_batches(single: Records) -> dict[int, int]:
    """First batch of each training loader of the one-process run."""
    out: dict[int, int] = {}
    for ident, by_number in single.training_passes().items():
        event = by_number[min(by_number)].get(0)
        if event and event.get("batches"):
            out[ident] = event["batches"][0]
    return out


def draws(records: Records) -> Row:
    """Random index draws in user code during training (``torch.randint``/``randperm``,
    numpy.random's and ``random``'s, a ``ddpify.rank_random`` stream's): the same values on
    every rank mean every rank reads the same samples."""
    by_site: dict[str, dict[int, dict[int, Any]]] = {}
    fn_of: dict[str, str] = {}
    for rank, events in records.every("draw").items():
        for event in events:
            by_site.setdefault(event["site"], {}).setdefault(event["n"], {})[rank] = event["digest"]
            fn_of[event["site"]] = event["fn"]
    if not by_site:
        return Row(
            "draws", NA, "no random index draw (torch.randint/randperm, numpy.random, random) in the script's own code during training"
        )
    problems: list[str] = []
    notes: list[str] = []
    for site, by_call in sorted(by_site.items()):
        complete = [digests for digests in by_call.values() if len(digests) == records.world]
        same = sum(len(set(digests.values())) == 1 for digests in complete)
        what = f"{fn_of[site]} at {site}"
        if complete and same == len(complete) and records.world > 1:
            problems.append(f"{what} drew the same values on every rank ({same} of {len(complete)} calls): the ranks read the same samples")
        else:
            notes.append(f"{what}: different on every rank ({len(complete) - same} of {len(complete)} calls)")
    if problems:
        return Row("draws", FAIL, "; ".join(problems))
    return Row("draws", PASS, "; ".join(notes))

"""Every batch full on every rank where every batch of the one-process run is full.

A script may size tensors by its configured batch size (``torch.ones(batch_size, 1)`` as the
targets of a loss, latent noise for a generator) and rely on the dataset being a whole number of
batches, which it is in one process. A rank's shard need not be: 544 samples make 17 batches of
32, but two shards of 272 end in a batch of 16, and the loss raises on a size mismatch. Where the
one-process run makes only full batches, each rank drops its last partial batch
(``drop_last=True``: fewer samples than one batch per rank and epoch, in a new draw each epoch);
where the one-process run has a partial batch too, nothing changes: the script copes with one.
Only a per-process batch can need it: a global batch split across ranks divides the shards
exactly where it divides the dataset."""

from __future__ import annotations

from typing import Any


def keep_batches_full(arguments: dict[str, Any], batch_size: int | None, shard_length: int) -> str | None:
    """Set ``drop_last`` in the sharded loader's ``arguments`` where the rule above asks for it;
    returns what to tell the user (None: nothing changed)."""
    per_rank = arguments.get("batch_size")
    if arguments.get("drop_last") or not batch_size or not per_rank:
        return None
    try:
        total = len(arguments["dataset"])
    except TypeError:
        return None  # no length: nothing to compare
    if total % batch_size != 0 or shard_length % per_rank == 0 or shard_length < per_rank:
        return None  # a partial batch in one process too; every batch full; or no full batch at all
    arguments["drop_last"] = True
    return (
        f"ddpify: one process makes only full batches ({total} samples, batch {batch_size}); a rank's shard of "
        f"{shard_length} is not a whole number of batches of {per_rank}, so each rank drops its last partial batch "
        "(drop_last=True): code sized by the batch size sees full batches, as in one process"
    )

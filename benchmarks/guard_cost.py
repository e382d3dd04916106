"""What ddpify's default guard rails add to a training step, measured in one process.

The guard rails that run every step are the forward override of ddpify's DistributedDataParallel
(a counter) and the optimizer-step pre-hook that checks it; everything else they do happens at
the wrap, at barriers and at saves. This times the same tiny training step -- the worst case:
the smaller the step, the larger the share -- with torch's DistributedDataParallel and with
ddpify's guarded one (a one-rank gloo group), the two models stepped alternately so both see
the same machine load, and prints the medians and the difference per step. ``--json PATH``
writes the numbers.

    python benchmarks/guard_cost.py [--steps 20000] [--width 64]        # one process
    torchrun --standalone --nproc_per_node=2 benchmarks/guard_cost.py --width 512   # 2 ranks, gloo
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

from ddpify.runtime._guard import GuardedDDP  # noqa: E402


def _model(width: int) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(32, width), torch.nn.ReLU(), torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 1)
    )


def interleaved_steps(steps: int, width: int) -> dict[str, list[float]]:
    """Seconds per training step of two identical models, one wrapped by torch's DDP and one by
    ddpify's, stepped alternately (so both see the same machine load), ``steps`` each."""
    runs = {}
    for name, wrapper in (("torch DDP", DistributedDataParallel), ("ddpify DDP (guard rails on)", GuardedDDP)):
        wrapped = wrapper(_model(width))
        runs[name] = (wrapped, torch.optim.SGD(wrapped.parameters(), lr=0.01))
    x, y = torch.randn(32, 32), torch.randn(32, 1)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for index in range(2 * steps):
        name = list(runs)[index % 2 if (index // 2) % 2 == 0 else 1 - index % 2]  # ABBA order
        wrapped, optimizer = runs[name]
        started = time.perf_counter()
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(wrapped(x), y).backward()
        optimizer.step()
        times[name].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.environ.pop("DDPIFY_GUARDS", None)
    os.environ.pop("DDPIFY_VERIFY", None)
    with tempfile.TemporaryDirectory() as folder:
        if "RANK" in os.environ:  # under torchrun: a real group of several ranks
            dist.init_process_group("gloo")
        else:
            dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=0, world_size=1)
        world = dist.get_world_size()
        try:
            interleaved_steps(500, args.width)  # warm-up
            times = interleaved_steps(args.steps, args.width)
        finally:
            dist.destroy_process_group()
    if int(os.environ.get("RANK", "0")) != 0:
        return
    plain = statistics.median(times["torch DDP"])
    guarded = statistics.median(times["ddpify DDP (guard rails on)"])
    print(
        f"training step, MLP 32-{args.width}-{args.width}-1, batch 32, 1 thread, {world} rank(s): "
        f"{args.steps} steps each, interleaved, medians (rank 0)"
    )
    print("| wrapper | step | vs torch DDP |")
    print("|---|---|---|")
    print(f"| torch DistributedDataParallel | {plain * 1e6:.1f} µs | 1.000x |")
    print(f"| ddpify's, default guard rails on | {guarded * 1e6:.1f} µs | {guarded / plain:.4f}x |")
    print(f"guard rails: {(guarded - plain) * 1e6:+.1f} µs per step")
    if args.json:
        args.json.write_text(json.dumps({"step_s": times, "added_s": guarded - plain, "ratio": guarded / plain}))


if __name__ == "__main__":
    main()

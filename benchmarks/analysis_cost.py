"""Convert's time over the libcst floor, for real files and generated shapes at several sizes.

The floor is what any libcst codemod pays before it decides anything: ``parse_module`` and the
positions and qualified names of every node. ddpify's analyses must stay within a small
multiple of it (target: 3x) at every size: a multiple that grows with the size is an analysis
that is not linear (issue 22). Both are timed in this process (imports excluded), medians of
``--repeat`` runs, alternated so load changes hit both alike.

    .venv/bin/python benchmarks/analysis_cost.py [FILE ...] [--sizes 10,40,160] [--repeat 3]

FILE: real scripts or library modules (none are bundled: pass a checkout's files, for example
detectron2's ``detectron2/data/transforms/augmentation_impl.py``). The generated shapes are
``benchmarks/shapes.py``'s. Exit 1 when a ratio exceeds the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import libcst as cst  # noqa: E402
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider  # noqa: E402
from shapes import SHAPES, program  # noqa: E402

from ddpify.api import convert_source  # noqa: E402

TARGET = 3.0


def floor(source: str) -> None:
    """Parse, positions, qualified names: the least a libcst codemod does."""
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    wrapper.resolve(PositionProvider)
    wrapper.resolve(QualifiedNameProvider)


def timed(run, source: str) -> float:
    started = time.perf_counter()
    run(source)
    return time.perf_counter() - started


def measure(source: str, repeat: int) -> tuple[float, float]:
    floors, converts = [], []
    for _ in range(repeat):
        floors.append(timed(floor, source))
        converts.append(timed(convert_source, source))
    return statistics.median(floors), statistics.median(converts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--sizes", default="10,40,160")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    measure(program("chain", 4), 1)  # warm up: ddpify's lazy imports are not the analysis
    inputs = [(str(path), path.read_text(encoding="utf-8")) for path in args.files]
    inputs += [(f"{shape} x{size}", program(shape, int(size))) for shape in SHAPES for size in args.sizes.split(",")]
    print("| input | lines | floor | convert | convert / floor |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for name, source in inputs:
        base, convert = measure(source, args.repeat)
        ratio = convert / base
        worst = max(worst, ratio)
        print(f"| {name} | {source.count(chr(10))} | {base * 1000:.0f} ms | {convert * 1000:.0f} ms | {ratio:.2f}x |", flush=True)
    print(f"\nworst convert / floor: {worst:.2f}x (target <= {TARGET:.0f}x)")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

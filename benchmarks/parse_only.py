"""The floor of any libcst-based linter: read and ``libcst.parse_module`` every file that
``ddpify check`` would look at (same discovery), nothing else.

    python benchmarks/parse_only.py FOLDER... [--jobs N]

``--jobs N`` parses in N forked processes, as ``ddpify check`` does on N cores. Prints the
number of files parsed (files that do not parse are counted and skipped).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path


def _parse(path: str) -> bool:
    import libcst as cst

    try:
        cst.parse_module(Path(path).read_bytes().decode("utf-8", "replace"))
    except Exception:  # noqa: BLE001 - the floor only counts what parses
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    from ddpify.check.files import python_files  # the same files ddpify check sees

    files = [str(p) for p in python_files(args.paths)]
    if args.jobs > 1 and len(files) > 1:
        import libcst  # noqa: F401 - imported once, inherited by the forked workers

        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            parsed = sum(pool.imap_unordered(_parse, sorted(files, key=lambda f: -Path(f).stat().st_size), chunksize=1))
    else:
        parsed = sum(_parse(f) for f in files)
    print(f"{parsed} of {len(files)} files parsed")
    sys.exit(0)


if __name__ == "__main__":
    main()

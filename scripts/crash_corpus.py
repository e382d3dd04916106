#!/usr/bin/env python3
"""Run ddpify's converter and linter over every .py file below FOLDER, in-process, and count.

    python scripts/crash_corpus.py FOLDER [-v] [--slowest N] [--cli]

For each file: decode it as the CLI does, ``convert_source`` it, convert the output again
(must change nothing), parse the output, render the report, and ``check_source`` both the
original and the converted text (the converted one also with ``fix=True``, whose result must
parse). Outcomes:

  converted   the output differs from the input
  unchanged   the output is byte-identical to the input
  reported    converted with at least one item for a human (ConversionResult.manual)
  refused     a DdpifyError with a one-line message (syntax error, undecodable, binary)
  crashed     any other exception: a traceback, always a ddpify bug

and the failures that must stay at zero: crashes (convert or check), idempotency failures,
outputs that do not parse, multi-line refusals, changed files that name no DataLoader and no
optimizer. With ``--cli`` each file also goes through ``ddpify FILE -o OUT`` and ``ddpify check
FILE`` (click's runner, in-process): exit 0 (1 for check findings) or one ``ddpify: error``
line with exit 2, never a traceback. Exit status 1 when any of those is non-zero. Not a test: the folder (e.g. the
.py files of pytorch/examples and torchvision) is not part of the repository.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from ddpify import source_io
from ddpify.api import convert_source
from ddpify.check.engine import check_source
from ddpify.convert import names
from ddpify.errors import DdpifyError
from ddpify.report import conversion_report


@dataclass
class Tally:
    tried: int = 0
    converted: int = 0
    unchanged: int = 0
    reported: int = 0
    refused: int = 0
    crashed: int = 0  # convert
    check_crashed: int = 0
    check_refused: int = 0
    not_idempotent: int = 0
    output_unparsable: int = 0
    fix_unparsable: int = 0
    multiline_refusal: int = 0
    no_training_code_changed: int = 0
    cli_failures: int = 0
    problems: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    times: list[tuple[float, str]] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return (self.crashed + self.check_crashed + self.not_idempotent + self.output_unparsable
                + self.fix_unparsable + self.multiline_refusal + self.no_training_code_changed + self.cli_failures)


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return True
    except SyntaxError:
        return False


def _parses(text: str, compiled_before: bool) -> bool:
    """libcst parses it, and Python too where Python parsed the input."""
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError:
        return False
    return _compiles(text) or not compiled_before


def _one(path: Path, name: str, tally: Tally) -> None:
    tally.tried += 1
    try:
        source = source_io.decode(path.read_bytes(), name)
    except DdpifyError as error:
        _refused(str(error), name, tally)
        return
    text = source.text
    compiled = _compiles(text)
    try:
        result = convert_source(text, filename=name)
        conversion_report(result, name, "out.py")
        source_io.encode(source, result.output)
    except DdpifyError as error:
        _refused(str(error), name, tally)
    except Exception:  # noqa: BLE001 - counting crashes is the point
        tally.crashed += 1
        tally.problems.append(f"CRASH convert {name}\n{traceback.format_exc(limit=-6)}")
    else:
        if result.changed:
            tally.converted += 1
            if not names.may_have_training_code(text):
                tally.no_training_code_changed += 1
                tally.problems.append(f"CHANGED without DataLoader/optimizer: {name}")
        else:
            tally.unchanged += 1
        if result.manual:
            tally.reported += 1
        if not _parses(result.output, compiled):
            tally.output_unparsable += 1
            tally.problems.append(f"OUTPUT DOES NOT PARSE: {name}")
        else:
            try:
                again = convert_source(result.output, filename=name)
                if again.output != result.output:
                    tally.not_idempotent += 1
                    tally.problems.append(f"NOT IDEMPOTENT: {name}")
            except Exception:  # noqa: BLE001
                tally.crashed += 1
                tally.problems.append(f"CRASH reconvert {name}\n{traceback.format_exc(limit=-6)}")
            _check(result.output, name + " (converted)", tally, fix=True, compiled=compiled)
    _check(text, name, tally, fix=False, compiled=compiled)


def _check(text: str, name: str, tally: Tally, *, fix: bool, compiled: bool) -> None:
    try:
        check_source(text, name)
        if fix:
            fixed = check_source(text, name, fix=True, unsafe_fixes=True).fixed
            if fixed is not None and not _parses(fixed, compiled):
                tally.fix_unparsable += 1
                tally.problems.append(f"FIXED OUTPUT DOES NOT PARSE: {name}")
    except DdpifyError as error:
        tally.check_refused += 1
        if "\n" in str(error):
            tally.multiline_refusal += 1
            tally.problems.append(f"MULTI-LINE REFUSAL (check) {name}: {error!r}")
    except Exception:  # noqa: BLE001
        tally.check_crashed += 1
        tally.problems.append(f"CRASH check {name}\n{traceback.format_exc(limit=-6)}")


def _cli(path: Path, name: str, tally: Tally, scratch: Path) -> None:
    from click.testing import CliRunner

    from ddpify.cli import main

    for args, allowed in (([str(path), "-o", str(scratch / "out.py"), "-q"], (0, 2)), (["check", str(path)], (0, 1, 2))):
        result = CliRunner().invoke(main, args)
        stderr = result.stderr.strip()
        bad = (result.exit_code not in allowed or "Traceback" in result.output or result.exception is not None
               and not isinstance(result.exception, SystemExit))
        if result.exit_code == 2 and args[0] != "check":
            bad = bad or len(stderr.splitlines()) != 1 or not stderr.startswith("ddpify: error:")
        if bad:
            tally.cli_failures += 1
            tally.problems.append(f"CLI {' '.join(args[:1])} {name}: exit {result.exit_code}: {result.output[-500:]!r}")


def _refused(message: str, name: str, tally: Tally) -> None:
    tally.refused += 1
    tally.refusals.append(message)
    if "\n" in message or not message.strip():
        tally.multiline_refusal += 1
        tally.problems.append(f"MULTI-LINE REFUSAL {name}: {message!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every refusal message")
    parser.add_argument("--slowest", type=int, default=5, metavar="N", help="list the N slowest files")
    parser.add_argument("--cli", action="store_true", help="also run `ddpify FILE -o OUT` and `ddpify check FILE` on each")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder}: not a directory")
    files = sorted(p for p in args.folder.rglob("*.py") if p.is_file())
    tally = Tally()
    started = time.perf_counter()
    scratch = Path(tempfile.mkdtemp(prefix="ddpify_crash_corpus."))
    for path in files:
        name = str(path.relative_to(args.folder))
        begin = time.perf_counter()
        _one(path, name, tally)
        if args.cli:
            _cli(path, name, tally, scratch)
        tally.times.append((time.perf_counter() - begin, name))
    shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.perf_counter() - started

    for problem in tally.problems:
        print(problem, file=sys.stderr)
    if args.verbose:
        for message in tally.refusals:
            print(f"refused: {message}")
    rows = [
        ("files tried", tally.tried),
        ("converted (output differs)", tally.converted),
        ("unchanged (byte-identical)", tally.unchanged),
        ("reported (items for a human)", tally.reported),
        ("refused (one-line DdpifyError)", tally.refused),
        ("crashed (convert, traceback)", tally.crashed),
        ("crashed (check, traceback)", tally.check_crashed),
        ("check refused (one-line)", tally.check_refused),
        ("idempotency failures", tally.not_idempotent),
        ("output does not parse", tally.output_unparsable),
        ("check --fix output does not parse", tally.fix_unparsable),
        ("multi-line refusals", tally.multiline_refusal),
        ("changed without training code", tally.no_training_code_changed),
    ] + ([("CLI failures (exit code, traceback, message)", tally.cli_failures)] if args.cli else [])
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    print(f"{'seconds':<{width}}  {elapsed:.1f}")
    if args.slowest:
        for seconds, name in sorted(tally.times, reverse=True)[: args.slowest]:
            print(f"  slow: {seconds:6.2f}s  {name}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())

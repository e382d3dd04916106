"""``ddpify SRC`` (``ddpify convert SRC``): options and exit codes only; the work is ``ddpify.api``."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from ddpify.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, DdpifyError

if TYPE_CHECKING:  # pathlib is imported by the command, not for --help / --version
    from pathlib import Path

EXIT_CODES_HELP = "Exit codes: 0 done, 2 bad input or usage, 3 internal error (nothing written on 2 or 3)."


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("src", type=str)
@click.option("-o", "--output", type=click.Path(), help="Write the result here (default: stdout).")
@click.option("--in-place", is_flag=True, help="Rewrite SRC itself.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff and write nothing.")
@click.option(
    "--per-process-batch",
    is_flag=True,
    help="Keep each loader's batch size per process (effective batch x world size) instead of splitting the global batch.",
)
@click.option("--standalone", is_flag=True, help="Embed the runtime helpers the result uses, so it needs only torch (no ddpify).")
@click.option("--annotate", is_flag=True, help="Also write each item that needs a human as a '# ddpify:' comment above its line.")
@click.option("-q", "--quiet", is_flag=True, help="No report on stderr.")
def convert(
    src: str, output: str | None, in_place: bool, show_diff: bool, per_process_batch: bool, standalone: bool, annotate: bool, quiet: bool
) -> None:
    """Convert SRC (a file, or - for stdin) for DistributedDataParallel."""
    from pathlib import Path

    try:
        _convert(src, Path(output) if output is not None else None, in_place, show_diff, per_process_batch, quiet, standalone, annotate)
    except DdpifyError as error:
        click.echo(f"ddpify: error: {error}", err=True)
        sys.exit(error.exit_code)
    except BrokenPipeError:  # `ddpify train.py | head`: the reader left, not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except RecursionError:  # libcst recurses per nesting level / operand of a long operator chain
        click.echo(
            f"ddpify: error: {src}: code nested too deeply for ddpify's parser (e.g. an operator chain of "
            f"hundreds of operands); nothing written",
            err=True,
        )
        sys.exit(EXIT_BAD_INPUT)
    except Exception as error:  # never a traceback: one line, exit 3, nothing written (writes come last)
        if os.environ.get("DDPIFY_DEBUG"):
            raise
        click.echo(
            f"ddpify: internal error: {src}: {error.__class__.__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            f"; nothing written. This is a ddpify bug (DDPIFY_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(EXIT_INTERNAL)


def _convert(
    src: str,
    output: Path | None,
    in_place: bool,
    show_diff: bool,
    per_process_batch: bool,
    quiet: bool,
    standalone: bool = False,
    annotate: bool = False,
) -> None:
    from pathlib import Path

    from ddpify import source_io
    from ddpify.api import convert_source
    from ddpify.report import conversion_report

    if in_place and (output is not None or src == "-"):
        raise DdpifyError("--in-place rewrites SRC itself: it cannot be combined with -o or stdin")
    if show_diff and (output is not None or in_place):
        raise DdpifyError("--diff writes nothing: it cannot be combined with -o or --in-place")
    if output is not None and output.is_dir():
        raise DdpifyError(f"{output}: is a directory; -o takes the output file's name")
    if src == "-":
        source = source_io.decode(sys.stdin.buffer.read(), "<stdin>")
        source_name = "<stdin>"
    else:
        path = Path(src)
        source = source_io.read_source(path)
        source_name = src
        if output is not None and _same_file(path, output):
            raise DdpifyError(f"{output}: output is the input file; use --in-place to rewrite it")
    result = convert_source(
        source.text, per_process_batch=per_process_batch, filename=source_name, standalone=standalone, annotate=annotate
    )
    target = src if in_place else str(output) if output is not None else "<stdout>"
    report = "" if quiet else conversion_report(result, source_name, target)  # before writing: nothing can fail after
    if show_diff:
        import difflib  # only for --diff: --help/--version stay light

        sys.stdout.write(
            "".join(
                difflib.unified_diff(
                    result.source.splitlines(keepends=True),
                    result.output.splitlines(keepends=True),
                    fromfile=source_name,
                    tofile=f"{source_name} (ddpify)",
                )
            )
        )
    elif in_place or output is not None:
        destination = Path(src) if in_place else output
        assert destination is not None
        if not (in_place and not result.changed):
            source_io.write_atomically(destination, source_io.encode(source, result.output))
    else:
        sys.stdout.buffer.write(source_io.encode(source, result.output))
        sys.stdout.flush()
    if report:
        click.echo(report, err=True, nl=False)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return b.exists() and (a.resolve() == b.resolve() or os.path.samefile(a, b))  # symlinks, hard links
    except OSError:
        return False

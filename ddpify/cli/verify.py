"""``ddpify verify``: options and exit codes only; the work is ``ddpify.verify.session``."""

from __future__ import annotations

import sys

import click

from ddpify.errors import DdpifyError

EXIT_CODES = "Exit codes: 0 every applicable property passes, 1 one fails, 2 usage or launch error."
VERIFY_HELP = (
    "Run SCRIPT under torchrun and check, property by property, that it trains correctly with DDP; "
    "SCRIPT_ARGS after -- go to SCRIPT. A single-GPU script is converted first (into a temporary file)."
)


@click.command(
    "verify", context_settings={"help_option_names": ["-h", "--help"]}, help=VERIFY_HELP, short_help=VERIFY_HELP, epilog=EXIT_CODES
)
@click.option(
    "--nproc",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Processes (one GPU each when there are enough, else CPU/gloo).",
)
@click.option(
    "--steps", type=click.IntRange(min=1), default=None, help="Stop after K steps of the first optimizer to step (default: the whole run)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Kill the run after S seconds without output or progress.",
)
@click.option("--compare", is_flag=True, help="Also run the script as one process, to compare the global batch.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Also write the verdict as JSON here.")
@click.option("-q", "--quiet", is_flag=True, help="Hide the script's own output.")
@click.argument("script", type=click.Path(dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
def verify(
    nproc: int,
    steps: int | None,
    timeout: float,
    compare: bool,
    json_path: str | None,
    quiet: bool,
    script: str,
    script_args: tuple[str, ...],
) -> None:
    from pathlib import Path

    from ddpify.source_io import check_output_path, write_atomically
    from ddpify.verify import session, verdict

    try:
        if json_path:
            check_output_path(Path(json_path))  # a regular file or a new path, before the run
        result = session.verify(Path(script), list(script_args), nproc=nproc, steps=steps, timeout=timeout, compare=compare, quiet=quiet)
    except DdpifyError as error:
        click.echo(f"ddpify: error: {error}", err=True)
        sys.exit(error.exit_code)
    click.echo(result.table(), nl=False)
    if json_path:
        write_atomically(Path(json_path), verdict.as_json(result.rows, result.header).encode())
    sys.exit(result.exit_code)

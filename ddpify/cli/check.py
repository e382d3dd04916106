"""``ddpify check``, ``ddpify rules`` and ``ddpify rule CODE``: options and exit codes only.

Exit codes of ``check``: 0 clean, 1 findings (or, with --diff, fixes to apply), 2 error (bad
file, option or config), 3 internal error, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ddpify.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, DdpifyError, reader_left

CHECK_EXIT_HELP = (
    "Exit codes: 0 no findings, 1 findings (or --diff would change files), 2 error (a file that "
    "cannot be read or parsed, an unknown rule code or config key), 3 internal error, "
    "130 interrupted. Notebooks (.ipynb) are checked cell by cell (PATH:cell_N:LINE:COL), not fixed. "
    "Results are cached per file content, rule selection and ddpify build (never stale; "
    "safe to delete) in $DDPIFY_CACHE_DIR or the user cache folder (~/.cache/ddpify)."
)
CHECK_HELP = "Lint DDP training scripts and notebooks (files or folders; default: the current folder)."


def _codes(values: tuple[str, ...]) -> tuple[str, ...]:
    """Comma-separated codes or prefixes; an unknown one is a usage error (exit 2), so a typo
    cannot silently select nothing or ignore nothing."""
    from ddpify.check.config import normalised_code, unknown_code

    codes = tuple(normalised_code(code) for value in values for code in value.split(",") if code.strip())
    for code in codes:
        problem = unknown_code(code)
        if problem:
            raise DdpifyError(problem)
    return codes


@click.command(epilog=CHECK_EXIT_HELP, help=CHECK_HELP, short_help=CHECK_HELP)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply fixes that change behaviour.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a diff; write nothing.")
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Only these codes or prefixes (comma-separated, repeatable); default: the default rules, DDP or ALL: every rule.",
)
@click.option(
    "--extend-select", multiple=True, metavar="CODES", help="Also these codes or prefixes (opt-in rules), on top of the selection."
)
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes.")
@click.option("--output-format", type=click.Choice(["text", "json", "github", "sarif"]), default="text", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--require-ddp", is_flag=True, help="Report files that are not distributed scripts (DDP000).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N", help="Processes to check files with (default: one per core).")
def check(**params: Any) -> None:
    try:
        code = _check(**params)
    except DdpifyError as error:  # a bad option or config: one line
        click.echo(f"ddpify: error: {error}", err=True)
        sys.exit(error.exit_code)
    except BrokenPipeError:
        reader_left()
    except Exception as error:  # never a traceback: one line, exit 3
        if os.environ.get("DDPIFY_DEBUG"):
            raise
        click.echo(
            f"ddpify: internal error: {error.__class__.__name__}: {error}. This is a ddpify bug (DDPIFY_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(code)


def _check(
    *,
    paths: tuple[str, ...],
    fix: bool,
    unsafe_fixes: bool,
    show_diff: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    exit_zero: bool,
    statistics: bool,
    require_ddp: bool,
    no_cache: bool,
    jobs: int | None,
    extend_select: tuple[str, ...],
) -> int:
    """The exit code of one ``ddpify check`` run."""
    from pathlib import Path  # here, not at import: --help / --version stay light

    from ddpify.check import output
    from ddpify.check.progress import ProgressBar
    from ddpify.check.run import Options, check_paths, missing

    targets = [Path(p) for p in paths] or [Path(".")]
    problem = missing(targets)
    if problem:
        raise DdpifyError(problem)
    options = Options(
        select=_codes(select),
        extend_select=_codes(extend_select),
        ignore=_codes(ignore),
        fix=fix or show_diff,
        unsafe_fixes=unsafe_fixes,
        write=fix and not show_diff,
        require_ddp=require_ddp,
        cache=not no_cache,
        jobs=jobs,
    )
    progress = ProgressBar()
    try:
        outcome = check_paths(targets, options, progress)
    finally:
        progress.close()
    findings = [f for r in outcome.results for f in r.findings]
    changed = [r for r in outcome.results if r.fixed is not None]
    if show_diff:
        import difflib

        for result in changed:
            sys.stdout.write(
                "".join(
                    difflib.unified_diff(
                        result.source.splitlines(keepends=True),
                        result.fixed.splitlines(keepends=True),  # type: ignore[union-attr]
                        fromfile=result.path,
                        tofile=f"{result.path} (fixed)",
                    )
                )
            )
    elif statistics:
        sys.stdout.write(output.statistics(findings))
    else:
        sys.stdout.write(output.render(findings, output_format))
        if output_format == "text":
            if fix and changed:
                sys.stdout.write(f"Fixed {len(changed)} file{'s' if len(changed) != 1 else ''}.\n")
            skipped = sum(1 for r in outcome.results if not r.distributed and not require_ddp)
            checked = len(outcome.results) - skipped
            sys.stdout.write(
                output.summary(findings, unsafe_fixes=unsafe_fixes, errors=len(outcome.errors), checked=checked, skipped=skipped)
            )
    for error in outcome.errors:
        click.echo(f"ddpify: error: {error}", err=True)
    if outcome.errors:
        return EXIT_BAD_INPUT
    if exit_zero:
        return 0
    return 1 if findings or (show_diff and changed) else 0


@click.command("rules", short_help="List every rule: code, name, default or opt-in, fix, message.")
def list_rules() -> None:
    """List every rule: code, name, default or opt-in, fix, message."""
    from ddpify.check.rules import ALL_RULES

    for rule in ALL_RULES:
        click.echo(f"{rule.code}  {rule.name:<34} {'default' if rule.default else 'opt-in':<7} {rule.fix or '-':<6} {rule.message}")


@click.command("rule", short_help="Explain one rule (e.g. DDP004), with its examples.")
@click.argument("code")
def explain_rule(code: str) -> None:
    """Explain one rule (e.g. DDP004), with its examples."""
    from ddpify.check.config import unknown_code
    from ddpify.check.docs import rule_doc
    from ddpify.check.rules import BY_CODE

    rule = BY_CODE.get(code.upper())
    if rule is None:
        problem = unknown_code(code.upper()) if code.upper() not in ("", "DDP000") else None
        click.echo(f"ddpify: error: {problem or f'no rule {code!r} to explain'} (see `ddpify rules`)", err=True)
        sys.exit(EXIT_BAD_INPUT)
    click.echo(rule_doc(rule), nl=False)

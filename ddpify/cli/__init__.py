"""Command line: the ``ddpify`` group; one module per command (``convert``, ``check``, ``launch``).
Argument parsing and exit codes only; the work happens in ``ddpify.api``, ``ddpify.check`` ...

Kept free of heavy imports (libcst, torch) at module level so ``--help`` and ``--version``
answer instantly.
"""

from __future__ import annotations

import sys

import click

from ddpify import __version__
from ddpify.cli.check import check, explain_rule, list_rules
from ddpify.cli.convert import EXIT_CODES_HELP, convert
from ddpify.cli.launch import launch_script
from ddpify.cli.verify import verify

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a process Ctrl-C ended


class _ConvertByDefault(click.Group):
    """``ddpify SRC ...`` means ``ddpify convert SRC ...``: converting is the main job, so its
    options are listed in ``ddpify --help`` itself, not only under ``ddpify convert --help``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["convert", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        """Ctrl-C: one line and exit 130 (click's default is "Aborted!" and 1). Writes are atomic,
        so an interrupted run leaves every output as it was or complete, never half-written."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("ddpify: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        click.Command.format_options(self, ctx, formatter)  # --version, --help
        convert_ctx = click.Context(convert, info_name="convert", parent=ctx)
        rows = [
            record
            for param in convert.params  # its own options: not SRC..., not a second --help
            if isinstance(param, click.Option) and (record := param.get_help_record(convert_ctx)) is not None
        ]
        with formatter.section("Convert options (ddpify SRC... [OPTIONS], the same as ddpify convert SRC... [OPTIONS])"):
            formatter.write_dl(rows)
        self.format_commands(ctx, formatter)


@click.group(
    cls=_ConvertByDefault,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES_HELP,
    subcommand_metavar="SRC... [CONVERT OPTIONS] | COMMAND [ARGS]...",
)
@click.version_option(__version__, prog_name="ddpify")
def main() -> None:
    """Turn a single-GPU PyTorch training script (or a notebook) into a correct DDP script.

    \b
      ddpify train.py -o train_ddp.py
      torchrun --nproc_per_node=4 train_ddp.py ...
    """


for _command in (convert, check, list_rules, explain_rule, launch_script, verify):
    main.add_command(_command)

"""Command line: the ``ddpify`` group; one module per command (``convert``, ``check``, ``launch``).
Argument parsing and exit codes only; the work happens in ``ddpify.api``, ``ddpify.check`` ...

Kept free of heavy imports (libcst, torch) at module level so ``--help`` and ``--version``
answer instantly.
"""

from __future__ import annotations

import click

from ddpify import __version__
from ddpify.cli.check import check, explain_rule, list_rules
from ddpify.cli.convert import EXIT_CODES_HELP, convert
from ddpify.cli.launch import launch_script
from ddpify.cli.verify import verify


class _ConvertByDefault(click.Group):
    """``ddpify SRC ...`` means ``ddpify convert SRC ...``: converting is the main job."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["convert", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_ConvertByDefault, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="ddpify")
def main() -> None:
    """Turn a single-GPU PyTorch training script into a correct DDP script.

    \b
      ddpify train.py -o train_ddp.py
      torchrun --nproc_per_node=4 train_ddp.py ...
    """


for _command in (convert, check, list_rules, explain_rule, launch_script, verify):
    main.add_command(_command)

"""``ddpify launch-script``: options and exit codes only; the rendering is ``ddpify.launch``."""

from __future__ import annotations

import os
import sys

import click
from click.core import ParameterSource

from ddpify.errors import DdpifyError
from ddpify.launch import LAUNCHERS, SLURM_MODES, LaunchSpec, conversion_warning, read_script, render

LAUNCH_HELP = "Write a launch script (torchrun, SLURM, mpirun) for SCRIPT, a converted train_ddp.py; ARGS after -- go to SCRIPT."
LAUNCH_EXIT_HELP = "Exit codes: 0 done, 2 bad input or usage, 130 interrupted."


@click.command(
    "launch-script",
    context_settings={"help_option_names": ["-h", "--help"]},
    short_help=LAUNCH_HELP,
    help=LAUNCH_HELP,
    epilog=LAUNCH_EXIT_HELP,
)
@click.option("--launcher", type=click.Choice(LAUNCHERS), required=True, help="Which launcher the script uses.")
@click.option("--nodes", type=int, default=1, show_default=True, help="Number of machines.")
@click.option("--procs-per-node", type=int, default=None, help="Processes per machine (default: --gpus-per-node, else 1).")
@click.option(
    "--gpus-per-node", type=int, default=0, show_default=True, help="GPUs per machine to request (SLURM) and bound the processes."
)
@click.option(
    "--slurm-mode",
    type=click.Choice(SLURM_MODES),
    default="tasks",
    show_default=True,
    help="SLURM only: 'tasks' = srun starts one task per process; 'torchrun' = srun starts one torchrun per node.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the script here, executable (default: stdout).")
@click.argument("script")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def launch_script(
    launcher: str,
    nodes: int,
    procs_per_node: int | None,
    gpus_per_node: int,
    slurm_mode: str,
    output: str | None,
    script: str,
    args: tuple[str, ...],
) -> None:
    """The script on stdout, or executable in OUTPUT (written atomically). A missing SCRIPT is
    an error; a script that is not converted, or an option another launcher reads, a warning."""
    from ddpify import source_io

    spec = LaunchSpec(launcher, script, tuple(args), nodes, procs_per_node, gpus_per_node, slurm_mode)
    try:
        text = render(spec)
        warnings = [conversion_warning(script, read_script(script))]
        if launcher != "slurm" and click.get_current_context().get_parameter_source("slurm_mode") != ParameterSource.DEFAULT:
            warnings.append(f"--slurm-mode is read by --launcher slurm only: ignored for --launcher {launcher}")
        for warning in filter(None, warnings):
            click.echo(f"ddpify: warning: {warning}", err=True)
        if output is None:
            click.echo(text, nl=False)
            return
        from pathlib import Path

        source_io.write_atomically(Path(output), text.encode())
        os.chmod(output, 0o755)
    except DdpifyError as error:
        click.echo(f"ddpify: error: {error}", err=True)
        sys.exit(error.exit_code)

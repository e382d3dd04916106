"""``ddpify launch-script``: a ready-to-run launch script for a converted training script.

Rendered from ``templates/launch/*.j2`` so the shell text users run is reviewed in one place.
No torch import: this runs wherever the converter runs.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from typing import Optional

import click

from ddpify.errors import DdpifyError

LAUNCHERS = ("torchrun", "slurm", "mpirun")
SLURM_MODES = ("tasks", "torchrun")

# What ddpify.runtime reads under each generated script (told in the script's header).
_READS = {
    "torchrun": "RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT",
    "slurm_tasks": "SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, SLURM_NTASKS_PER_NODE, SLURM_STEP_NODELIST, SLURM_JOB_ID",
    "mpirun": "OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE, _LOCAL_SIZE, MASTER_ADDR, MASTER_PORT",
}


@dataclass(frozen=True)
class LaunchSpec:
    """Everything a launch script depends on; ``procs_per_node`` defaults to one per GPU."""

    launcher: str
    script: str
    args: tuple[str, ...] = ()
    nodes: int = 1
    procs_per_node: Optional[int] = None
    gpus_per_node: int = 0
    slurm_mode: str = "tasks"

    @property
    def procs(self) -> int:
        return self.procs_per_node if self.procs_per_node is not None else (self.gpus_per_node or 1)

    def template(self) -> str:
        if self.launcher == "torchrun":
            return "launch/torchrun.sh.j2" if self.nodes == 1 else "launch/torchrun_multinode.sh.j2"
        if self.launcher == "slurm":
            return f"launch/slurm_{self.slurm_mode}.sbatch.j2"
        return "launch/mpirun.sh.j2"

    def command_line(self) -> str:
        """The ddpify command that regenerates this script (recorded in its header)."""
        words = ["ddpify", "launch-script", "--launcher", self.launcher, "--nodes", str(self.nodes),
                 "--procs-per-node", str(self.procs)]
        if self.gpus_per_node:
            words += ["--gpus-per-node", str(self.gpus_per_node)]
        if self.launcher == "slurm":
            words += ["--slurm-mode", self.slurm_mode]
        words += [self.script, *(["--", *self.args] if self.args else [])]
        return shlex.join(words)


def _check(spec: LaunchSpec) -> None:
    if spec.launcher not in LAUNCHERS:
        raise DdpifyError(f"unknown launcher {spec.launcher!r}; choose one of {', '.join(LAUNCHERS)}")
    if spec.slurm_mode not in SLURM_MODES:
        raise DdpifyError(f"unknown SLURM mode {spec.slurm_mode!r}; choose one of {', '.join(SLURM_MODES)}")
    if spec.nodes < 1 or spec.procs < 1 or spec.gpus_per_node < 0:
        raise DdpifyError("--nodes and --procs-per-node must be at least 1, --gpus-per-node at least 0")
    if spec.gpus_per_node and spec.procs > spec.gpus_per_node:
        raise DdpifyError(f"--procs-per-node {spec.procs} exceeds --gpus-per-node {spec.gpus_per_node}: "
                          "DDP needs one GPU per process")


def render(spec: LaunchSpec) -> str:
    """The launch script's text; DdpifyError for options that cannot work together."""
    from ddpify import templating

    _check(spec)
    reads_key = "slurm_tasks" if spec.launcher == "slurm" and spec.slurm_mode == "tasks" else (
        "torchrun" if spec.launcher == "slurm" else spec.launcher)
    template = templating.environment(trim_blocks=True, lstrip_blocks=True).get_template(spec.template())
    from pathlib import PurePath

    return template.render(
        command_line=spec.command_line().replace("\n", " "),  # a comment line stays one line
        reads=_READS[reads_key],
        nodes=spec.nodes,
        procs_per_node=spec.procs,
        gpus_per_node=spec.gpus_per_node,
        job_name=PurePath(spec.script).stem or "train",
        program=shlex.join([spec.script, *spec.args]),
    )


@click.command("launch-script", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--launcher", type=click.Choice(LAUNCHERS), required=True, help="Which launcher the script uses.")
@click.option("--nodes", type=int, default=1, show_default=True, help="Number of machines.")
@click.option("--procs-per-node", type=int, default=None, help="Processes per machine (default: --gpus-per-node, else 1).")
@click.option("--gpus-per-node", type=int, default=0, show_default=True, help="GPUs per machine to request (SLURM) and bound the processes.")
@click.option("--slurm-mode", type=click.Choice(SLURM_MODES), default="tasks", show_default=True,
              help="SLURM only: 'tasks' = srun starts one task per process; 'torchrun' = srun starts one torchrun per node.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the script here, executable (default: stdout).")
@click.argument("script")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def launch_script(launcher: str, nodes: int, procs_per_node: Optional[int], gpus_per_node: int, slurm_mode: str,
                  output: Optional[str], script: str, args: tuple[str, ...]) -> None:
    """Write a launch script for SCRIPT (a converted train_ddp.py); ARGS after -- go to SCRIPT."""
    from ddpify import source_io

    spec = LaunchSpec(launcher, script, tuple(args), nodes, procs_per_node, gpus_per_node, slurm_mode)
    try:
        text = render(spec)
        if output is None:
            click.echo(text, nl=False)
            return
        from pathlib import Path

        source_io.write_atomically(Path(output), text.encode())
        os.chmod(output, 0o755)
    except DdpifyError as error:
        click.echo(f"ddpify: error: {error}", err=True)
        sys.exit(error.exit_code)

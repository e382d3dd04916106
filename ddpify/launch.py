"""``ddpify launch-script``: a ready-to-run launch script for a converted training script.

Rendered from ``templates/launch/*.j2`` so the shell text users run is reviewed in one place.
No torch import: this runs wherever the converter runs.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

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
    procs_per_node: int | None = None
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
        words = ["ddpify", "launch-script", "--launcher", self.launcher, "--nodes", str(self.nodes), "--procs-per-node", str(self.procs)]
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
        raise DdpifyError(f"--procs-per-node {spec.procs} exceeds --gpus-per-node {spec.gpus_per_node}: DDP needs one GPU per process")


def read_script(script: str) -> bytes:
    """The training script's bytes. A missing script is an error (exit 2) here, not an hour
    later on the cluster when the launch script starts it."""
    path = Path(script)
    if not path.is_file():
        why = "is a directory, not a script" if path.is_dir() else "no such file"
        raise DdpifyError(f"{script}: {why}; give the converted script (`ddpify train.py -o train_ddp.py` writes one)")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DdpifyError(f"{script}: cannot read it: {exc.strerror}") from None


def conversion_warning(script: str, source: bytes) -> str | None:
    """Why ``script`` may not be ready for the launcher, or None. A warning, not an error: the
    launch script is still written. Distributed is what ``ddpify check`` lints (a script that
    imports ddpify's runtime or torch.distributed), or a script with the runtime embedded."""
    import libcst as cst

    from ddpify.check.scope import is_distributed_script
    from ddpify.standalone import BEGIN

    if BEGIN.encode() in source:  # --standalone output: the runtime is embedded, not imported
        return None
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return f"{script}:{exc.raw_line}: does not parse as Python; the launch script runs it anyway"
    if is_distributed_script(module):
        return None
    return (
        f"{script}: not converted (no ddpify runtime, no torch.distributed): every process would train the whole "
        f"model alone; convert it first with `ddpify {script} -o {Path(script).stem}_ddp.py`"
    )


def render(spec: LaunchSpec) -> str:
    """The launch script's text; DdpifyError for options that cannot work together."""
    from ddpify import templating

    _check(spec)
    reads_key = (
        "slurm_tasks"
        if spec.launcher == "slurm" and spec.slurm_mode == "tasks"
        else ("torchrun" if spec.launcher == "slurm" else spec.launcher)
    )
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

"""Launcher detection beyond torchrun (SLURM under srun, Open MPI, MPICH / Intel MPI), the
rendezvous address derived for them, and SLURM host lists -- all from fake environments."""

from __future__ import annotations

import atexit
import os

import pytest
import torch
import torch.distributed as dist

import ddpify.runtime as ddpify
from ddpify.runtime import _process_group
from ddpify.runtime._env import Env, detect_env, detect_launcher
from ddpify.runtime._hostlist import expand_hostlist
from ddpify.runtime._rendezvous import port_for_job, rendezvous_defaults

SRUN = {  # what srun exports to task 3 of 8, two nodes with four tasks each
    "SLURM_STEP_ID": "0",
    "SLURM_PROCID": "5",
    "SLURM_LOCALID": "1",
    "SLURM_NTASKS": "8",
    "SLURM_NODEID": "1",
    "SLURM_STEP_TASKS_PER_NODE": "4(x2)",
    "SLURM_STEP_NODELIST": "gpu[07-08]",
    "SLURM_JOB_NODELIST": "gpu[07-08],spare1",
    "SLURM_JOB_ID": "4123456",
}
OPENMPI = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_MCA_ess_base_jobid": "146669569"}
MPICH = {"PMI_RANK": "2", "MPI_LOCALRANKID": "0", "PMI_SIZE": "4", "MPI_LOCALNRANKS": "2"}
TORCHRUN = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"}


@pytest.mark.parametrize(
    "environ, launcher, expected",
    [
        (SRUN, "slurm", Env(rank=5, local_rank=1, world_size=8, local_world_size=4)),
        ({**SRUN, "SLURM_NTASKS_PER_NODE": "3", "SLURM_NTASKS": "6"}, "slurm", Env(5, 1, 6, 3)),
        ({**SRUN, "SLURM_STEP_TASKS_PER_NODE": "2(x3),1", "SLURM_NODEID": "3", "SLURM_LOCALID": "0",
          "SLURM_NTASKS": "7", "SLURM_PROCID": "6"}, "slurm", Env(6, 0, 7, 1)),
        (OPENMPI, "openmpi", Env(1, 1, 2, 2)),
        (MPICH, "mpich", Env(2, 0, 4, 2)),
        ({}, "none", Env(0, 0, 1, 1)),
    ],
)
def test_each_launcher_is_read(environ, launcher, expected):
    assert detect_launcher(environ) == (launcher, expected)


@pytest.mark.parametrize(
    "environ, launcher",
    [
        ({**SRUN, **TORCHRUN}, "torchrun"),  # srun torchrun: the worker is torchrun's
        ({**OPENMPI, **TORCHRUN}, "torchrun"),
        ({**SRUN, **OPENMPI}, "slurm"),  # srun --mpi=pmix sets both; SLURM comes first
        ({**OPENMPI, **MPICH}, "openmpi"),
    ],
)
def test_detection_order(environ, launcher):
    assert detect_launcher(environ)[0] == launcher


def test_sbatch_script_without_srun_is_a_single_process():
    allocation = {k: v for k, v in SRUN.items() if k != "SLURM_STEP_ID"}
    assert detect_launcher(allocation) == ("none", Env(0, 0, 1, 1))


@pytest.mark.parametrize(
    "environ, missing",
    [
        ({"SLURM_STEP_ID": "0", "SLURM_PROCID": "0"}, ["SLURM_LOCALID", "SLURM_NTASKS", "SLURM_TASKS_PER_NODE"]),
        ({k: v for k, v in OPENMPI.items() if k != "OMPI_COMM_WORLD_LOCAL_SIZE"}, ["OMPI_COMM_WORLD_LOCAL_SIZE"]),
        ({"PMI_RANK": "0", "PMI_SIZE": "2"}, ["MPI_LOCALRANKID", "MPI_LOCALNRANKS"]),
    ],
)
def test_incomplete_launcher_variables_name_what_is_missing(environ, missing):
    with pytest.raises(RuntimeError, match="incomplete launcher environment") as info:
        detect_env(environ)
    for name in missing:
        assert name in str(info.value)


@pytest.mark.parametrize(
    "environ, fragment",
    [
        ({**SRUN, "SLURM_PROCID": "8"}, "SLURM_PROCID=8"),
        ({**SRUN, "SLURM_LOCALID": "4"}, "SLURM_LOCALID=4"),
        ({**SRUN, "SLURM_NODEID": "2"}, "SLURM_NODEID=2 has no entry"),
        ({**SRUN, "SLURM_STEP_TASKS_PER_NODE": "4(x2"}, "not a SLURM task count list"),
        ({**OPENMPI, "OMPI_COMM_WORLD_SIZE": "two"}, "OMPI_COMM_WORLD_SIZE='two'"),
        ({**MPICH, "MPI_LOCALNRANKS": "5"}, "MPI_LOCALNRANKS=5"),
    ],
)
def test_inconsistent_launcher_variables(environ, fragment):
    with pytest.raises(RuntimeError, match="invalid launcher environment") as info:
        detect_env(environ)
    assert fragment in str(info.value)


# ------------------------------------------------------------------------------ hostlists


@pytest.mark.parametrize(
    "text, hosts",
    [
        ("localhost", ["localhost"]),
        ("node[01-04,07],gpu3", ["node01", "node02", "node03", "node04", "node07", "gpu3"]),
        ("gpu[9-11]", ["gpu9", "gpu10", "gpu11"]),
        ("r[1-2]n[3,5]", ["r1n3", "r1n5", "r2n3", "r2n5"]),
        ("a-1.example.org,b[001-002]-ib", ["a-1.example.org", "b001-ib", "b002-ib"]),
    ],
)
def test_hostlists_expand(text, hosts):
    assert expand_hostlist(text) == hosts


@pytest.mark.parametrize("text", ["node[01-04", "node01]", "node[a-b]", "node[4-2]", ""])
def test_bad_hostlists_are_refused(text):
    with pytest.raises(ValueError):
        expand_hostlist(text)


# ----------------------------------------------------------------------------- rendezvous


def test_srun_rendezvous_is_first_step_host_and_job_port():
    launcher, env = detect_launcher(SRUN)
    assert rendezvous_defaults(launcher, env, SRUN) == {"MASTER_ADDR": "gpu07", "MASTER_PORT": str(20000 + 3456)}
    without_step_list = {k: v for k, v in SRUN.items() if k != "SLURM_STEP_NODELIST"}
    assert rendezvous_defaults(launcher, env, without_step_list)["MASTER_ADDR"] == "gpu07"


def test_user_set_rendezvous_wins():
    launcher, env = detect_launcher(SRUN)
    assert rendezvous_defaults(launcher, env, {**SRUN, "MASTER_PORT": "1234"}) == {"MASTER_ADDR": "gpu07"}
    partial = {k: v for k, v in SRUN.items() if not k.endswith("NODELIST") and k != "SLURM_JOB_ID"}
    assert rendezvous_defaults(launcher, env, {**partial, "MASTER_ADDR": "h", "MASTER_PORT": "1"}) == {}


def test_srun_without_nodelist_or_job_id_names_them():
    launcher, env = detect_launcher(SRUN)
    partial = {k: v for k, v in SRUN.items() if not k.endswith("NODELIST") and k != "SLURM_JOB_ID"}
    with pytest.raises(RuntimeError, match="SLURM_STEP_NODELIST or SLURM_JOB_NODELIST and SLURM_JOB_ID are missing"):
        rendezvous_defaults(launcher, env, partial)
    with pytest.raises(RuntimeError, match="SLURM_JOB_ID is missing; set MASTER_PORT"):
        rendezvous_defaults(launcher, env, {**partial, "SLURM_JOB_NODELIST": "a"})


def test_mpi_single_node_rendezvous_is_loopback_and_job_port():
    launcher, env = detect_launcher(OPENMPI)
    assert rendezvous_defaults(launcher, env, OPENMPI) == {
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port_for_job("146669569"))}
    pmix = {**OPENMPI, "PMIX_NAMESPACE": "prterun-host-123@1"}
    port = int(rendezvous_defaults(launcher, env, pmix)["MASTER_PORT"])
    assert 20000 <= port < 30000 and port == port_for_job("prterun-host-123@1")


def test_mpich_single_node_without_job_id_agrees_through_the_parent_pid():
    launcher, env = detect_launcher({**MPICH, "PMI_SIZE": "2", "PMI_RANK": "1", "MPI_LOCALRANKID": "1"})
    assert rendezvous_defaults(launcher, env, MPICH) == {
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port_for_job(str(os.getppid())))}


def test_mpi_across_nodes_needs_master_addr():
    launcher, env = detect_launcher(MPICH)  # 4 ranks, 2 per node
    with pytest.raises(RuntimeError, match="MASTER_ADDR is missing"):
        rendezvous_defaults(launcher, env, MPICH)
    with pytest.raises(RuntimeError, match="MASTER_PORT is missing"):
        rendezvous_defaults(launcher, env, {**MPICH, "MASTER_ADDR": "host0"})
    assert rendezvous_defaults(launcher, env, {**MPICH, "MASTER_ADDR": "h", "MASTER_PORT": "1"}) == {}


@pytest.mark.parametrize("launcher", ["torchrun", "none"])
def test_torchrun_and_single_process_need_no_defaults(launcher):
    assert rendezvous_defaults(launcher, Env(0, 0, 2, 2), {}) == {}
    assert rendezvous_defaults("slurm", Env(0, 0, 1, 1), {}) == {}


def test_setup_under_srun_exports_the_rendezvous(monkeypatch):
    calls: list[dict] = []
    monkeypatch.setattr(dist, "is_initialized", lambda: bool(calls))
    monkeypatch.setattr(dist, "init_process_group", lambda **kw: calls.append(
        {**kw, "addr": os.environ.get("MASTER_ADDR"), "port": os.environ.get("MASTER_PORT")}))
    monkeypatch.setattr(dist, "destroy_process_group", lambda: None)
    monkeypatch.setattr(dist, "broadcast_object_list", lambda objects, src: objects.__setitem__(0, 7))  # rank 0 drew 7
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(atexit, "register", lambda fn: None)
    monkeypatch.setattr(_process_group, "_atexit_registered", False)
    for name in ("MASTER_ADDR", "MASTER_PORT"):  # setup() writes them: restore after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    for name, value in SRUN.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DDPIFY_INIT_TIMEOUT", "12.5")
    ddpify.setup()
    (call,) = calls
    assert (call["rank"], call["world_size"], call["addr"], call["port"]) == (5, 8, "gpu07", "23456")
    assert call["timeout"].total_seconds() == 12.5

"""``ddpify.analysis.rank_tests``: which ranks a test selects, for many spellings."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddpify.analysis.ranks import EVERY, NOWHERE, UNKNOWN, Branch, Ranks, RankSelection, Term
from tests.analysis.conftest import analyse

S = RankSelection
PROLOGUE = "import os\nimport torch.distributed as dist\nimport ddpify.runtime as ddpify\n"


def _last_test(source: str) -> tuple[object, cst.BaseExpression]:
    """The analysis of ``source`` and the test of its last ``if``."""
    analysis = analyse(PROLOGUE + textwrap.dedent(source))
    test = [node for node in analysis.source.of_types(cst.If)][-1].test  # type: ignore[attr-defined]
    return analysis, test


def selection(source: str) -> RankSelection:
    analysis, test = _last_test(source)
    return analysis.rank_tests.selection(test)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "test",
    [
        "rank == 0",
        "0 == rank",
        "dist.get_rank() == 0",
        "not rank",
        "not dist.get_rank()",
        "args.rank in [-1, 0]",
        "args.rank <= 0",
        "int(os.environ['RANK']) == 0",
        "os.environ.get('RANK', '0') == '0'",
        "int(os.getenv('RANK', 0)) == 0",
        "ddpify.rank() == 0",
        "ddpify.is_main_process()",
        "accelerator.is_main_process",
        "trainer.is_global_zero",
        "self.global_rank == 0",
        "ddp_rank == 0",
        "utils.is_main_process()",
        "misc.is_master()",
        "not args.distributed or rank == 0",
        "not dist.is_initialized() or dist.get_rank() == 0",
        "dist.is_initialized() and dist.get_rank() == 0",
        "local_rank == 0 and dist.get_rank() == 0",
        "rank == 0 and epoch % 10 == 0",
        "(rank == 0)",
        "rank == 0 == 0 if False else rank == 0",
        "int(os.environ['SLURM_PROCID']) == 0",
        "accelerator.process_index == 0",
        "distenv.master",  # rq-vae's DistEnv(master=(rank == 0)) returned by the project's dist helper
    ],
)
def test_main_process_tests(test: str) -> None:
    assert selection(f"if {test}:\n    pass\n") is S.MAIN


@pytest.mark.parametrize(
    "test",
    [
        "local_rank == 0",
        "args.local_rank == 0",
        "args.local_rank < 1",
        "args.local_rank <= 0",
        "args.local_rank in [-1, 0]",
        "args.local_rank in (0, -1)",
        "not args.local_rank",
        "os.environ['LOCAL_RANK'] == '0'",
        "int(os.environ.get('LOCAL_RANK', -1)) in [-1, 0]",
        "args.gpu == 0",
        "self.gpu_id == 0",
        "rank % ngpus_per_node == 0",
        "args.rank % ngpus_per_node == 0",
        "not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0",
        "accelerator.is_local_main_process",
        "accelerator.local_process_index == 0",
        "ddpify.local_rank() == 0",
        "int(os.environ['SLURM_LOCALID']) == 0",
    ],
)
def test_once_per_node_tests(test: str) -> None:
    assert selection(f"if {test}:\n    pass\n") is S.LOCAL_MAIN


@pytest.mark.parametrize("test", ["rank != 0", "rank > 0", "rank >= 1", "dist.get_rank() != 0", "not is_main_process()", "rank"])
def test_non_main_tests(test: str) -> None:
    assert selection(f"if {test}:\n    pass\n") is S.NOT_MAIN


@pytest.mark.parametrize("test", ["local_rank not in [-1, 0]", "args.local_rank > 0", "not accelerator.is_local_main_process"])
def test_non_local_main_tests(test: str) -> None:
    assert selection(f"if {test}:\n    pass\n") is S.NOT_LOCAL_MAIN


@pytest.mark.parametrize(
    "test", ["rank == 1", "dist.get_rank() == 1", "rank == 0 or args.verbose", "node_rank == 0", "rank != 0 and step % 5 == 0"]
)
def test_other_rank_dependent_tests(test: str) -> None:
    assert selection(f"if {test}:\n    pass\n") is S.OTHER


@pytest.mark.parametrize(
    "test",
    [
        "epoch % 5 == 0",
        "args.local_rank != -1",
        "args.distributed",
        "world_size > 1",
        "dist.get_world_size() > 1",
        "dist.is_initialized()",
        "'RANK' in os.environ and 'WORLD_SIZE' in os.environ",
        "args.lora_rank > 0",
        "low_rank",
        "args.gpu is not None",
        "rank_loss < best",
        "True",
    ],
)
def test_not_rank_tests(test: str) -> None:
    assert selection(f"if {test}:\n    pass\n") is S.NOT_A_RANK_TEST is S.ALL


@pytest.mark.parametrize(
    "test",
    [
        "not args.distributed",
        "args.local_rank == -1",
        "world_size == 1",
        "not dist.is_initialized()",
        "not cfg.MODEL.DIST_TRAIN",  # TransReID's flag
        "not args.use_ddp_train",
        "not opt.dist_training",
    ],
)
def test_single_process_tests_select_no_rank(test: str) -> None:
    analysis, node = _last_test(f"if {test}:\n    pass\n")
    ranks = analysis.rank_tests.ranks(node)  # type: ignore[attr-defined]
    assert ranks.selection is S.NONE and ranks.branch is Branch.SINGLE_PROCESS


@pytest.mark.parametrize("test", ["args.distributed", "world_size > 1", "args.local_rank != -1", "dist.is_initialized()", "ddp"])
def test_distributed_tests_pick_the_distributed_branch(test: str) -> None:
    source = f"ddp = int(os.environ.get('RANK', -1)) != -1\nif {test}:\n    pass\n"
    analysis, node = _last_test(source)
    assert analysis.rank_tests.ranks(node).branch is Branch.DISTRIBUTED  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "guard",
    [
        "dist.is_available() and args.local_rank != -1",
        "torch.distributed.is_available() and torch.distributed.is_initialized()",
        "args.local_rank != -1 and dist.is_available()",
    ],
)
def test_a_flag_set_true_on_rank_0_and_in_the_single_process_is_rank_0s(guard: str) -> None:
    """vilbert's ``default_gpu``: True under ``rank == 0`` in the distributed branch and in the
    ``else``; ``dist.is_available()`` holds in every distributed run, so the ``else`` is the
    single process only (not every rank, as an unknown call would make it)."""
    source = f"""\
    import torch
    default_gpu = False
    if {guard}:
        rank = dist.get_rank()
        if rank == 0:
            default_gpu = True
    else:
        default_gpu = True
    if default_gpu:
        pass
    """
    assert selection(source) is S.MAIN


def test_flag_assigned_in_both_branches_nanogpt() -> None:
    source = """\
    ddp = int(os.environ.get("RANK", -1)) != -1
    if ddp:
        ddp_rank = int(os.environ["RANK"])
        master_process = ddp_rank == 0
    else:
        master_process = True
    if master_process:
        pass
    """
    assert selection(source) is S.MAIN


@pytest.mark.parametrize(
    "assigned, expected",
    [
        ("is_master = rank == 0", S.MAIN),
        ("is_master = local_rank == 0", S.LOCAL_MAIN),  # the value wins over the name
        ("is_master = args.local_rank in [-1, 0]", S.LOCAL_MAIN),
        ("is_master = dist.get_rank() == 0 if dist.is_initialized() else True", S.MAIN),
        ("is_master = True", S.MAIN),  # a constant: the name is all there is
        ("self_is_chief = not rank", S.MAIN),
    ],
)
def test_flags_follow_their_assignment(assigned: str, expected: RankSelection) -> None:
    name = assigned.split(" = ")[0]
    assert selection(f"{assigned}\nif {name}:\n    pass\n") is expected


def test_helpers_defined_in_the_file_are_followed_detr() -> None:
    source = """\
    def is_dist_avail_and_initialized():
        if not dist.is_available():
            return False
        if not dist.is_initialized():
            return False
        return True

    def get_rank():
        if not is_dist_avail_and_initialized():
            return 0
        return dist.get_rank()

    def is_main_process():
        return get_rank() == 0

    if is_main_process():
        pass
    """
    assert selection(source) is S.MAIN


def test_a_helper_of_the_file_is_judged_by_its_body_not_its_name() -> None:
    source = """\
    def is_master():
        return int(os.environ["LOCAL_RANK"]) == 0

    if is_master():
        pass
    """
    assert selection(source) is S.LOCAL_MAIN


def test_method_helpers_are_followed() -> None:
    source = """\
    class Trainer:
        def __init__(self):
            self.local_rank = int(os.environ["LOCAL_RANK"])

        def is_leader(self):
            return self.local_rank == 0

        def run(self):
            if self.is_leader():
                pass
    """
    assert selection(source) is S.LOCAL_MAIN


def test_spawn_index_parameter_is_the_local_rank() -> None:
    source = """\
    import torch.multiprocessing as mp

    def main_worker(gpu, ngpus_per_node, args):
        if gpu == 0:
            pass

    mp.spawn(main_worker, nprocs=2, args=(2, args))
    """
    assert selection(source) is S.LOCAL_MAIN


def test_spawn_parameter_named_rank_is_the_global_rank() -> None:
    source = """\
    import torch.multiprocessing as mp

    def worker(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        if rank == 0:
            pass

    mp.spawn(worker, args=(2,), nprocs=2)
    """
    assert selection(source) is S.MAIN


def test_gpu_is_a_rank_only_in_scripts_that_manage_processes() -> None:
    plain = analyse("import torch\nif args.gpu == 0:\n    pass\n")
    test = plain.source.of_types(cst.If)[0].test  # type: ignore[attr-defined]
    assert plain.rank_tests.selection(test) is S.ALL


def test_recursive_helpers_terminate() -> None:
    source = """\
    def is_main():
        return is_main() and rank == 0

    flag = other_flag
    other_flag = flag
    if is_main() or flag:
        pass
    """
    assert selection(source) in (S.MAIN, S.OTHER, S.ALL)


def test_terms_and_rank_dependence() -> None:
    analysis = analyse(PROLOGUE + "x = (dist.get_rank(), os.environ['LOCAL_RANK'], world_size, args.seed + rank, f'[GPU{gpu_id}]', seed)\n")
    tuple_ = analysis.source.of_types(cst.Tuple)[0]
    values = [e.value for e in tuple_.elements]  # type: ignore[attr-defined]
    tests = analysis.rank_tests
    assert [tests.term(v) for v in values[:3]] == [Term.GLOBAL_RANK, Term.LOCAL_RANK, Term.WORLD_SIZE]
    assert [tests.depends_on_rank(v) for v in values] == [True, True, False, True, True, False]


def test_set_algebra() -> None:
    main = Ranks(3, 3)
    assert (~main).selection is S.NOT_MAIN
    assert (main | ~main) == EVERY and (main & ~main) == NOWHERE
    assert (main & UNKNOWN).selection is S.MAIN and (main | UNKNOWN).selection is S.OTHER
    assert EVERY.selection is S.ALL and NOWHERE.selection is S.NONE and UNKNOWN.selection is S.ALL
    assert not UNKNOWN.depends_on_process and main.depends_on_process


@pytest.mark.parametrize(
    "test, parts",
    [
        ("args.local_rank in [-1, 0]", [()]),
        ("not args.local_rank", [()]),
        ("args.local_rank in [-1, 0] and epoch % 2 == 0", [("left",)]),
        ("epoch % 2 == 0 and (local_rank == 0 and not args.dry_run)", [("right", "left")]),
        ("local_rank == 0 or (rank == 0 and verbose)", [()]),  # rank 0 is a local rank 0 too
        ("local_rank == 0 or verbose", []),  # any rank may pass: not a once-per-node guard
        ("rank == 0", []),
        ("local_rank == 0 and dist.get_rank() == 0", []),  # the global rank decides already
    ],
)
def test_local_main_parts(test: str, parts: list[tuple[str, ...]]) -> None:
    analysis, node = _last_test(f"if {test}:\n    pass\n")
    assert analysis.rank_tests.local_main_parts(node) == parts  # type: ignore[attr-defined]


def test_rank_dependence_follows_one_assignment_not_calls() -> None:
    analysis = analyse(
        PROLOGUE
        + "seed = args.seed + rank\ntag = f'[GPU{gpu_id}]'\nmodel = DDP(model, device_ids=[local_rank])\n"
        + "copy = seed\nx = (seed, tag, model, copy, int(os.environ['RANK']) * 2)\n"
    )
    tuple_ = analysis.source.of_types(cst.Tuple)[-1]
    values = [e.value for e in tuple_.elements]  # type: ignore[attr-defined]
    assert [analysis.rank_tests.depends_on_rank(v) for v in values] == [True, True, False, False, True]

"""The judges on hand-made records (no torch, no launch): the edge cases a short run does not
reach -- DistributedSampler padding, samplers with replacement, drop_last, partial epochs,
per-process batches, tagged prints, diverging collectives, RNG draws across passes -- and the
command's usage errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ddpify.verify import judge_data, judge_model, judge_run, launch
from ddpify.verify.records import Outcome, Records
from ddpify.verify.verdict import FAIL, NA, PASS, Row, exit_code, render


def records(world: int = 2, **per_rank: list[dict]) -> Records:
    """``records(r0=[...], r1=[...])``; every rank also gets a start event."""
    found = Records(world=world)
    for rank in range(world):
        found.events[rank] = [{"e": "start", "pid": rank}, *per_rank.get(f"r{rank}", [])]
    return found


def outcome(**changes: object) -> Outcome:
    values = {
        "returncode": 0,
        "timed_out": False,
        "elapsed": 1.0,
        "output_tail": "",
        "nproc": 2,
        "device": "CPU, gloo",
        "steps": None,
        "timeout": 10.0,
    }
    return Outcome(**{**values, **changes})  # type: ignore[arg-type]


LOADER = {"e": "loader", "id": 0, "site": "t.py:3", "dataset": "TensorDataset", "length": 5, "batch_size": 1, "drop_last": False}


def one_pass(indices: list[int], n: int = 0, complete: bool = True, batches: list[int] | None = None) -> dict:
    return {
        "e": "pass",
        "loader": 0,
        "n": n,
        "indices": indices,
        "batches": batches or [1] * len(indices),
        "complete": complete,
        "steps": 3,
    }


def test_distributed_sampler_padding_is_allowed_overlap_is_not() -> None:
    padded = records(r0=[LOADER, one_pass([0, 2, 4])], r1=[LOADER, one_pass([1, 3, 0])])  # 5 padded to 6
    assert judge_data.shards(padded).status == PASS
    overlap = records(r0=[LOADER, one_pass([0, 1, 2])], r1=[LOADER, one_pass([1, 2, 3])])
    row = judge_data.shards(overlap)
    assert row.status == FAIL and "the shards overlap" in row.evidence


def test_missing_indices_fail_unless_drop_last_explains_them() -> None:
    short = records(r0=[LOADER, one_pass([0])], r1=[LOADER, one_pass([1])])
    assert "3 of 5 indices read by no rank" in judge_data.shards(short).evidence
    dropping = {**LOADER, "drop_last": True, "batch_size": 2}
    assert judge_data.shards(records(r0=[dropping, one_pass([0])], r1=[dropping, one_pass([1])])).status == PASS


def test_replacement_samplers_must_differ_between_ranks() -> None:
    same = records(r0=[LOADER, one_pass([3, 3, 1])], r1=[LOADER, one_pass([3, 3, 1])])
    assert "every rank drew the same samples" in judge_data.shards(same).evidence
    differ = records(r0=[LOADER, one_pass([3, 3, 1])], r1=[LOADER, one_pass([2, 0, 2])])
    assert judge_data.shards(differ).status == NA  # nothing to cover: draws with replacement
    weighted = {**LOADER, "replacement": True}  # a WeightedRandomSampler: no repeat within a rank's short shard
    across = records(r0=[weighted, one_pass([3, 1])], r1=[weighted, one_pass([3, 0])])
    assert judge_data.shards(across).status == NA  # one agreed draw split by rank: the repeat is the draw's
    assert judge_data.shards(records(r0=[LOADER, one_pass([3, 1])], r1=[LOADER, one_pass([3, 0])])).status == FAIL
    alike = records(r0=[weighted, one_pass([3, 1])], r1=[weighted, one_pass([3, 1])])
    assert "every rank drew the same samples" in judge_data.shards(alike).evidence


def test_a_run_stopped_inside_the_first_epoch_checks_disjointness_only() -> None:
    partial = records(r0=[LOADER, one_pass([4, 0], complete=False)], r1=[LOADER, one_pass([2, 1], complete=False)])
    assert judge_data.shards(partial).evidence.endswith("disjoint so far; cover not checked: the run stopped inside the first epoch")


def test_reshuffle_compares_the_common_prefix_and_accepts_in_order_reading() -> None:
    stale = records(
        r0=[LOADER, one_pass([4, 0, 2]), one_pass([4, 0], 1, False)], r1=[LOADER, one_pass([1, 3, 2]), one_pass([1, 3], 1, False)]
    )
    assert judge_data.reshuffle(stale).status == FAIL
    ordered = records(r0=[LOADER, one_pass([0, 2, 4]), one_pass([0, 2, 4], 1)], r1=[LOADER, one_pass([1, 3, 0]), one_pass([1, 3, 0], 1)])
    assert "read in order, not shuffled" in judge_data.reshuffle(ordered).evidence
    # Conv-TasNet's 4 items, shuffled: the first epoch came out in order by chance, the next did not
    lucky = records(r0=[LOADER, one_pass([0, 2]), one_pass([3, 1], 1)], r1=[LOADER, one_pass([1, 3]), one_pass([0, 2], 1)])
    assert "a new order in each of" in judge_data.reshuffle(lucky).evidence


def test_passes_that_fed_no_step_are_not_training_passes() -> None:
    """A batch grabbed each epoch before the real pass (same order: the sampler's epoch is
    the same) must not read as an epoch that repeated the previous order."""
    grab = {**one_pass([0, 2], complete=False), "steps": 0}

    def epochs(r0: list[int], r1: list[int]) -> Records:
        return records(
            r0=[LOADER, {**grab, "indices": r0[:1]}, one_pass(r0, 1), {**grab, "n": 2, "indices": r0[::-1][:1]}, one_pass(r0[::-1], 3)],
            r1=[LOADER, {**grab, "indices": r1[:1]}, one_pass(r1, 1), {**grab, "n": 2, "indices": r1[::-1][:1]}, one_pass(r1[::-1], 3)],
        )

    ranks = epochs([4, 0, 2], [1, 3, 4])
    assert sorted(ranks.training_passes()[0]) == [1, 3]
    assert judge_data.reshuffle(ranks).status == PASS
    unused = records(r0=[LOADER, {**grab, "indices": [0]}], r1=[LOADER, {**grab, "indices": [0]}])
    assert unused.training_passes() == {} and judge_data.shards(unused).status == NA


def test_global_batch_against_the_single_process_batch() -> None:
    def run(loader: dict, b0: list[int], b1: list[int]) -> Row:
        return judge_data.batch(records(r0=[loader, one_pass([0, 2], batches=b0)], r1=[loader, one_pass([1, 3], batches=b1)]), None)

    assert run({**LOADER, "single_batch": 2}, [1, 1], [1, 1]).status == PASS
    row = run({**LOADER, "single_batch": 4}, [1, 1], [1, 1])
    assert row.status == FAIL and "global batch 2 = 1 + 1, but 4 as one process" in row.evidence
    assert "different numbers of batches" in run({**LOADER, "single_batch": 2}, [1, 1], [2]).evidence
    assert run(LOADER, [1, 1], [1, 1]).status == NA


def test_a_per_process_batch_passes_only_where_tensors_of_the_batch_length_were_built() -> None:
    kept = {**LOADER, "single_batch": 2, "per_process_batch": True, "batch_size": 2}
    sized = {"e": "batch-sized", "fn": "ones", "site": "t.py:9", "length": 2}

    def run(*events: dict) -> Row:
        return judge_data.batch(records(r0=[kept, one_pass([0, 2], batches=[2]), *events], r1=[kept, one_pass([1, 3], batches=[2])]), None)

    row = run(sized)
    assert row.status == PASS and "as the batch's length 2 sizes tensors built in training (ones at t.py:9)" in row.evidence
    row = run({**sized, "length": 64})  # a sampling tensor of its own size: no reason to keep the batch
    assert row.status == FAIL and "no tensor built in training has the batch's length 2, so nothing needed it" in row.evidence
    assert run().status == FAIL
    # Glow's learned prior: a parameter of the script's own module with the batch's leading size
    prior = {"e": "wrap", "id": 0, "model": "Glow", "site": "t.py:3", "leading": [2, 16]}
    row = run(prior)
    assert row.status == PASS and "as the batch's length 2 sizes a parameter of Glow" in row.evidence
    assert run({**prior, "leading": [16]}).status == FAIL


def test_own_leading_sizes_read_the_scripts_modules_not_torch_layers() -> None:
    import torch

    from ddpify.verify.hooks_model import _own_leading_sizes

    class Prior(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.prior_h = torch.nn.Parameter(torch.zeros(4, 6, 2, 2))
            self.conv = torch.nn.Conv2d(3, 8, 1)  # torch's layer: its 8 output channels are no batch size
            self.register_buffer("scale", torch.ones(5))  # one dimension: a vector, not rows

    assert _own_leading_sizes(Prior()) == [4]


def step(n: int, digest: str, passes: int = 1) -> dict:
    return {"e": "step", "opt": 0, "n": n, "main": True, "w": {"0": [1, True]}, "rng": {"torch": digest}, "pass": passes}


_PASS = {"e": "pass", "loader": 0, "n": 1, "steps": 2}  # a training loader's pass: the ranks' data are split


def test_rng_draws_between_steps_of_one_pass_must_differ_per_rank() -> None:
    same = records(r0=[_PASS, step(1, "a"), step(2, "b")], r1=[_PASS, step(1, "a"), step(2, "b")])
    assert judge_model.rng(same).status == FAIL
    differ = records(r0=[_PASS, step(1, "a"), step(2, "b")], r1=[_PASS, step(1, "c"), step(2, "d")])
    assert judge_model.rng(differ).status == PASS
    new_pass_only = records(r0=[_PASS, step(1, "a"), step(2, "b", passes=2)], r1=[_PASS, step(1, "a"), step(2, "b", passes=2)])
    assert judge_model.rng(new_pass_only).status == NA  # a DataLoader pass drew its seed, training did not


def test_the_same_draws_without_a_training_loader_are_the_one_process_step() -> None:
    """unseen20k's pygcn_train: a full-graph step on every rank, no loader splits the data, and
    the converter keeps one seed for the whole run: the same dropout on every rank is right."""
    row = judge_model.rng(records(r0=[step(1, "a"), step(2, "b")], r1=[step(1, "a"), step(2, "b")]))
    assert row.status == NA and "no training loader splits the data" in row.evidence


def test_draws_are_judged_once_batches_are_drawn_per_rank_without_a_loader() -> None:
    """unseen20p's relgan_iter: batches drawn per rank by ``ddpify.rank_random`` (no loader), after
    which the runtime switches the seeded RNGs to seed + rank (``rank-seeds``): the noise between
    steps must then differ per rank, and is judged as with a sharded loader."""
    switched = {"e": "rank-seeds", "site": "t.py:7"}
    row = judge_model.rng(records(r0=[switched, step(1, "a"), step(2, "b")], r1=[switched, step(1, "c"), step(2, "d")]))
    assert row.status == PASS, row
    row = judge_model.rng(records(r0=[switched, step(1, "a"), step(2, "b")], r1=[switched, step(1, "a"), step(2, "b")]))
    assert row.status == FAIL, row


def test_model_init_that_differs_before_the_broadcast_is_a_note_generated_data_a_failure() -> None:
    wrap = {"e": "wrap", "id": 0, "model": "Net", "site": "t.py:9"}
    row = judge_model.init(records(r0=[{**wrap, "before": "x"}], r1=[{**wrap, "before": "y"}]))
    assert row.status == PASS and "made rank 0's by DDP's broadcast" in row.evidence
    data = {"e": "dataset", "n": 0, "site": "t.py:4", "length": 8}
    assert judge_model.init(records(r0=[{**data, "digest": "a"}], r1=[{**data, "digest": "b"}])).status == FAIL


def test_lines_tagged_with_their_rank_are_fine_the_same_line_twice_is_not() -> None:
    def line(site: str, text: str) -> dict:
        return {"e": "print", "site": site, "n": 1, "text": text}

    tagged = records(r0=[line("t.py:5", "[rank 0] epoch 1 loss 0.25")], r1=[line("t.py:5", "[rank 1] epoch 1 loss 0.31")])
    assert judge_run.writes(tagged).status == PASS
    repeated = records(r0=[line("t.py:5", "epoch 1 loss 0.25")], r1=[line("t.py:5", "epoch 1 loss 0.25")])
    assert judge_run.writes(repeated).status == FAIL


def test_collectives_that_diverge_are_named_at_the_first_difference() -> None:
    def coll(n: int, op: str, site: str) -> list[dict]:
        return [{"e": "coll", "op": op, "site": site, "n": n, "ph": "in"}, {"e": "coll", "n": n, "ph": "out"}]

    same = records(r0=coll(0, "dist.barrier", "t.py:3"), r1=coll(0, "dist.barrier", "t.py:3"))
    assert judge_run.hang(same, outcome()).status == PASS
    extra = records(r0=coll(0, "dist.barrier", "t.py:3") + coll(1, "dist.all_reduce", "t.py:7"), r1=coll(0, "dist.barrier", "t.py:3"))
    row = judge_run.hang(extra, outcome())
    assert row.status == FAIL and "rank 0 dist.all_reduce at t.py:7 (its collective #2); rank 1 none" in row.evidence


def test_checkpoints_holding_ddp_objects_fail_and_exit_codes_follow_the_rows() -> None:
    save = {"e": "save", "path": "/x/m.pt", "site": "t.py:8", "module_keys": [], "ddp_objects": ["obj['model']"]}
    row = judge_run.checkpoints(records(r0=[save]))
    assert row.status == FAIL and "holds a DistributedDataParallel object (obj['model'])" in row.evidence
    assert exit_code([row]) == 1 and exit_code([Row("run", PASS, ""), Row("hang", NA, "")]) == 0
    assert render([row], "header").splitlines()[-1] == "verdict: FAIL (0 pass, 1 fail, 0 n/a)"
    timed_out = judge_run.run(records(), outcome(timed_out=True, returncode=-9))
    assert timed_out.status == FAIL and "killed after 10 s" in timed_out.evidence


@pytest.mark.parametrize(
    "source,single_gpu",
    [
        ("import torch\nmodel.cuda()\n", True),
        ("import torch.distributed as dist\ndist.init_process_group('nccl')\n", False),
        ("import ddpify.runtime as ddpify\n", False),
        ("from ddpify.runtime import prepare_model\n", False),
    ],
)
def test_which_scripts_are_converted_first(source: str, single_gpu: bool) -> None:
    assert launch.needs_conversion(source) is single_gpu


def test_usage_and_launch_errors_exit_2(tmp_path: object) -> None:
    missing = subprocess.run([sys.executable, "-m", "ddpify", "verify", "no_such_script.py"], capture_output=True, text=True)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad = subprocess.run([sys.executable, "-m", "ddpify", "verify", "--nproc", "0", "x.py"], capture_output=True, text=True)
    assert bad.returncode == 2


def two_optimizers(steps_of_second: int) -> Records:
    """Rank events of an encoder/decoder run: optimizer 0 steps 4 times, optimizer 1
    ``steps_of_second`` times, both update wrapped models."""
    events: list[dict] = [
        {"e": "optimizer", "id": 0, "kind": "SGD", "site": "t.py:21"},
        {"e": "optimizer", "id": 1, "kind": "Adam", "site": "t.py:22"},
    ]
    for n in range(1, 5):
        events.append({"e": "step", "opt": 0, "n": n, "main": True, "w": {"0": [1, True]}})
        if n <= steps_of_second:
            events.append({"e": "step", "opt": 1, "n": n, "main": False, "w": {"1": [1, True]}})
    return records(r0=events, r1=events)


def test_every_row_counts_optimizer_steps_the_same_way_and_says_which() -> None:
    found = two_optimizers(steps_of_second=4)
    counted = "8 optimizer steps (4 of SGD (t.py:21), 4 of Adam (t.py:22))"
    assert judge_run.run(found, outcome()).evidence == f"exit 0 on 2 ranks, {counted} each"
    assert judge_model.forward(found).evidence == f"{counted} on rank 0, each after a forward through the wrapper"
    found.events[0].append({"e": "stop", "step": 4})
    assert judge_run.run(found, outcome(steps=4)).evidence == (
        "stopped on every rank after 4 steps of SGD (t.py:21), the first of 2 optimizers to step (--steps 4)"
    )


def test_one_optimizer_is_counted_without_a_split() -> None:
    found = records(
        r0=[{"e": "optimizer", "id": 0, "kind": "SGD", "site": "t.py:9"}, {"e": "step", "opt": 0, "n": 1, "main": True, "w": {}}]
    )
    assert found.count_steps(0) == "1 optimizer step"
    assert found.count_steps(0, wrapped_only=True) == "0 optimizer steps"


def test_a_subset_sampler_is_covered_by_its_own_order() -> None:
    """A SubsetRandomSampler reads its subset: the rest of the dataset (a validation split) is
    no index read by no rank."""
    subset = {**LOADER, "length": 8, "order_length": 4}
    row = judge_data.shards(records(r0=[subset, one_pass([6, 0])], r1=[subset, one_pass([2, 4])]))
    assert row.status == PASS and "cover all 4" in row.evidence
    short = judge_data.shards(records(r0=[subset, one_pass([6])], r1=[subset, one_pass([2])]))
    assert "2 of 4 indices read by no rank" in short.evidence


def test_gloo_teardown_abort_after_every_rank_ended_is_no_failure_of_the_script() -> None:
    """PyTorch's gloo teardown sometimes aborts a process after the script is done ("terminate
    called without an active exception"): every rank wrote its end and none raised, so the run
    row passes and says so; a rank that never ended or raised keeps it failed, and the evidence
    names the cause, not the launcher's banner."""
    abort = "epoch 1 done\nterminate called without an active exception\n=====================\nRoot Cause (first observed failure):\n====="
    ended = records(r0=[{"e": "end"}], r1=[{"e": "end"}])
    row = judge_run.run(ended, outcome(returncode=1, output_tail=abort))
    assert row.status == PASS and "teardown aborted" in row.evidence
    stopped = records(r0=[{"e": "stop", "step": 40}, {"e": "end"}], r1=[{"e": "stop", "step": 40}, {"e": "end"}])
    row = judge_run.run(stopped, outcome(returncode=1, output_tail=abort, steps=40))
    assert row.status == PASS and row.evidence.startswith("stopped after 40 optimizer steps on every rank (--steps 40); then")
    one_ended = records(r0=[{"e": "end"}])
    row = judge_run.run(one_ended, outcome(returncode=1, output_tail=abort))
    assert row.status == FAIL and row.evidence.endswith(abort.splitlines()[1])
    raised = records(
        r0=[{"e": "end"}], r1=[{"e": "error", "type": "ValueError", "message": "bad", "at": "t.py:3"}, {"e": "end"}]
    )
    assert judge_run.run(raised, outcome(returncode=1, output_tail=abort)).status == FAIL
    crash = "Traceback (most recent call last):\nValueError: bad shape\n=====\nFailures:\n  <NO_OTHER_FAILURES>\n====="
    assert judge_run.run(records(), outcome(returncode=1, output_tail=crash)).evidence.endswith("ValueError: bad shape")


def test_the_run_row_quotes_the_rank_that_failed_not_the_one_that_lost_its_peer() -> None:
    """Rank 1 raised its own error; rank 0 then lost its connection in the next collective:
    the row names rank 1's error, the cause."""
    lost = {"e": "error", "type": "DistBackendError", "message": "[gloo] Connection closed by peer [127.0.0.1]:1234", "at": "train.py:40"}
    cause = {"e": "error", "type": "FileNotFoundError", "message": "[Errno 2] No such file: 'fake.png'", "at": "trainer.py:127"}
    row = judge_run.run(records(r0=[lost], r1=[cause]), outcome(returncode=1))
    assert row.status == FAIL and "rank 1: FileNotFoundError" in row.evidence
    alone = judge_run.run(records(r0=[lost]), outcome(returncode=1))
    assert "rank 0: DistBackendError" in alone.evidence

"""Run-time proof for issue 11 ("correct or honest on scripts it has never seen"): converted
scripts run under torchrun with 2 CPU processes (gloo).

- a wrap placed inside a Trainer's __init__, after ``self.model = model.to(device)``: disjoint
  shards, equal parameters at the end;
- a model with a layer its forward never uses, wrapped with ``find_unused_parameters=True``:
  trains several iterations without the reducer's error (DDP without it stops at the second);
- a nanoGPT-style ``get_batch()``: the ranks draw different training offsets and the same
  evaluation offsets; the same with numpy indices and a batch built by appending (a Word2Vec
  tutorial's ``random_batch()``), drawn from ``ddpify.rank_random(np.random)``; a vocabulary
  numbered in the order of a set of strings, alike on every rank (``ddpify.agreed``);
- a loader handed to ``fit(train_loader, epochs)`` by a launcher in another file: rebuilt with
  ``ddpify.shard`` in fit(), disjoint shards on the two ranks, reshuffled every epoch;
- a condition dropped on random steps (``cond = None``): wrapped with
  ``find_unused_parameters=True``, it trains in sync; without it DDP stops (the control).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import torch

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


def _converted(name: str, tmp_path: Path) -> Path:
    converted = tmp_path / f"{name}_ddp.py"
    converted.write_text(convert_source((DATA / f"{name}.py").read_text()).output)
    return converted


@pytest.mark.torchrun
def test_wrap_inside_a_trainer_after_its_move(tmp_path: Path) -> None:
    script = _converted("trainer_moves_model", tmp_path)
    text = script.read_text()
    assert "        self.model = model.to(device)\n" in text
    assert text.index("self.model = model.to(device)") < text.index("self.model = ddpify.prepare_model(self.model)")
    assert text.index("self.model = ddpify.prepare_model(self.model)") < text.index("def _run_batch")
    run = run_script(script, cwd=tmp_path).assert_ok()
    train = run.loader_seq(128)
    for epoch in (0, 1):
        run.assert_disjoint_cover(train, epoch, dataset_len=128)
    run.assert_params_equal()


@pytest.mark.torchrun
def test_unused_layer_trains_with_find_unused_parameters(tmp_path: Path) -> None:
    script = _converted("unused_layer", tmp_path)
    text = script.read_text()
    assert "model = ddpify.prepare_model(model, find_unused_parameters=True)" in text
    run = run_script(script, cwd=tmp_path).assert_ok()
    train = run.loader_seq(64)
    assert run.num_epochs(0, train) == 2 and run.batch_sizes(0, train, 1) == [8, 8, 8, 8]  # 8 iterations per rank
    run.assert_params_equal()


@pytest.mark.torchrun
def test_random_batches_differ_between_ranks_evaluation_agrees(tmp_path: Path) -> None:
    script = _converted("random_batches", tmp_path)
    assert "generator=ddpify.rank_generator(when_training=True)" in script.read_text()
    run = run_script(script, cwd=tmp_path, trace=False).assert_ok()
    draws = re.findall(r"draw grad=(\d) (\[[\d, ]+\])", run.stderr)
    training = [d for grad, d in draws if grad == "1"]
    evaluation = [d for grad, d in draws if grad == "0"]
    assert len(training) == 2 * 6 and len(evaluation) == 2 * 6, run.describe()
    # two ranks, the same number of draws each: a draw that both ranks made appears twice
    assert len(set(training)) == len(training), "ranks drew the same training batches"
    assert len(set(evaluation)) == len(evaluation) // 2, "ranks evaluated on different batches"


@pytest.mark.torchrun
def test_numpy_random_batches_differ_between_ranks_and_so_do_later_draws(tmp_path: Path) -> None:
    script = _converted("random_batches_numpy", tmp_path)
    assert "index = ddpify.rank_random(np.random).choice(" in script.read_text()
    run = run_script(script, cwd=tmp_path).assert_ok()
    draws = re.findall(r"draw grad=(\d) (\[.*\])", run.stderr)
    training = [d for grad, d in draws if grad == "1"]
    evaluation = [d for grad, d in draws if grad == "0"]
    assert len(training) == 2 * 6 and len(evaluation) == 2 * 3, run.describe()
    assert len(set(training)) > 6, "ranks drew the same training batches"
    # evaluate()'s own random.sample is no batch draw ddpify rewrites: once batches are drawn per
    # rank, the seeded streams are seed + rank (as after a sharded loader's first batch)
    assert len(set(evaluation)) > len(evaluation) // 2, "the global streams stayed alike after training started"
    run.assert_params_equal()


@pytest.mark.torchrun
@pytest.mark.parametrize(
    ("name", "converted"), [("vocabulary_from_a_set", True), ("vocabulary_from_a_set", False), ("vocabulary_at_import_time", True)]
)
def test_a_vocabulary_from_a_set_is_numbered_alike_on_every_rank(tmp_path: Path, name: str, converted: bool) -> None:
    """Every process seeds its string hashes apart (PYTHONHASHSEED random): the original's two
    processes number the words differently (the control), the converted ranks alike, also when
    the vocabulary is built at import time above a ``__main__`` block."""
    script = _converted(name, tmp_path) if converted else DATA / f"{name}.py"
    run = run_script(script, cwd=tmp_path, trace=False, env={"PYTHONHASHSEED": "random"}).assert_ok()
    orders = re.findall(r"vocabulary (.*)", run.stderr)
    assert len(orders) == 2, run.describe()
    assert (orders[0] == orders[1]) is converted, orders


@pytest.mark.torchrun
@pytest.mark.parametrize("case", ["wrap_at_import_time", "wrap_inside_main_block"])
def test_a_model_built_at_import_time_is_really_wrapped(tmp_path: Path, case: str) -> None:
    """pradyu/meliketoy-style scripts: the model is built at module level and trained from the
    __main__ block. The wrap must run where the process group exists (set up after the imports,
    or inside the block), or prepare_model returns the plain model and nothing is averaged: each
    rank trains on its own random batches, so unaveraged parameters would differ."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "convert" / case / "input.py"
    converted = tmp_path / "train_ddp.py"
    converted.write_text(convert_source(fixture.read_text()).output)
    run = run_script(converted, cwd=tmp_path).assert_ok()
    run.assert_params_equal()


EMA_MODULE = """\
import torch


class EMA:
    def __init__(self, beta):
        self.beta, self.steps = beta, 0

    def step_ema(self, ema_model, model):
        if self.steps == 0:
            ema_model.load_state_dict(model.state_dict())  # a plain DDP wrapper would give module. keys
        with torch.no_grad():
            for ema_p, p in zip(ema_model.parameters(), model.parameters()):
                ema_p.lerp_(p, 1 - self.beta)
        self.steps += 1
"""
SAMPLING_MODULE = """\
import torch


def sample(model, n):
    return model(torch.zeros(n, model.in_features))  # the DDP wrapper has no in_features
"""


@pytest.mark.torchrun
def test_ema_and_sampling_helpers_get_the_plain_module(tmp_path: Path) -> None:
    """dome272/pradyu-style: another file's EMA update gets the model beside its plain copy,
    another file's sampler runs under no_grad and reads the model's own attribute. Given the DDP
    wrapper, the first fails at step 1 (module. keys) and the second with AttributeError; the
    conversion hands both ddpify.unwrap(model), and the run trains with averaged gradients."""
    (tmp_path / "ema.py").write_text(EMA_MODULE)
    (tmp_path / "sampling.py").write_text(SAMPLING_MODULE)
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "convert" / "ema_copy_before_wrap" / "input.py"
    converted = tmp_path / "train_ddp.py"
    converted.write_text(convert_source(fixture.read_text()).output)
    run = run_script(converted, cwd=tmp_path).assert_ok()
    run.assert_params_equal()
    assert (tmp_path / "ema_ckpt.pt").exists()
    import torch

    best = torch.load(tmp_path / "best.pt", weights_only=False)  # no process group here: a plain module loads
    assert type(best) is torch.nn.Linear


_LAUNCHER = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

from loader_parameter_lib_ddp import fit

data = TensorDataset(torch.arange(64, dtype=torch.float32).unsqueeze(1), torch.zeros(64, 1))
fit(DataLoader(data, batch_size=8, shuffle=True), epochs=2)
"""


@pytest.mark.torchrun
def test_a_loader_handed_in_as_a_parameter_is_sharded_and_reshuffled(tmp_path: Path) -> None:
    """fit(train_loader, epochs) of a module, called by a launcher this file does not show: the
    loader is rebuilt with a DistributedSampler first thing in fit(), so the two ranks draw
    disjoint halves, and set_epoch reshuffles them every epoch."""
    module = _converted("loader_parameter_lib", tmp_path)
    text = module.read_text()
    assert "    train_loader = ddpify.shard(train_loader)\n" in text
    assert "        ddpify.set_epoch(train_loader, epoch)\n" in text
    launcher = tmp_path / "launch_fit.py"
    launcher.write_text(_LAUNCHER)
    run = run_script(launcher, cwd=tmp_path).assert_ok()
    rebuilt = run.loader_seq(64, nth=1)  # the launcher's own loader is #0, never iterated
    assert run.num_epochs(0, rebuilt) == 2
    for epoch in (0, 1):
        run.assert_disjoint_cover(rebuilt, epoch, dataset_len=64)
    run.assert_reshuffled(rebuilt, 0, 1)
    run.assert_params_equal()


@pytest.mark.torchrun
def test_condition_dropped_on_some_steps_trains_with_find_unused_parameters(tmp_path: Path) -> None:
    """The label embedding gets no gradient on the steps a rank drops the condition, and the
    ranks drop it on different steps: without find_unused_parameters=True DDP stops with its
    reducer error (the control run); with it, both ranks train to the end in sync."""
    script = _converted("sometimes_unconditioned", tmp_path)
    text = script.read_text()
    assert "net = ddpify.prepare_model(net, find_unused_parameters=True)" in text
    run = run_script(script, cwd=tmp_path).assert_ok()
    run.assert_params_equal()
    control = tmp_path / "control_ddp.py"
    control.write_text(text.replace("ddpify.prepare_model(net, find_unused_parameters=True)", "ddpify.prepare_model(net)"))
    failed = run_script(control, cwd=tmp_path)
    assert failed.returncode != 0 and "find_unused_parameters" in failed.stdout + failed.stderr


@pytest.mark.torchrun
def test_batches_sliced_by_a_range_loop_are_split_across_ranks(tmp_path: Path) -> None:
    """``X_train[i:i + bs]`` in a loop over ``range(0, n, bs)``: each rank takes its part of every
    batch (4 + 4 rows, disjoint, the same rows for x, y and the ids), the steps stay 8 per
    epoch, and the parameters end equal."""
    script = _converted("sliced_batches", tmp_path)
    assert "ddpify.batch_part(X_train[i:i + batch_size])" in script.read_text()
    run = run_script(script, cwd=tmp_path).assert_ok()
    seen = [json.loads((tmp_path / f"rows_{rank}.json").read_text()) for rank in (0, 1)]
    assert len(seen[0]) == len(seen[1]) == 16
    for step in range(16):
        assert len(seen[0][step]) == len(seen[1][step]) == 4
        assert sorted(seen[0][step] + seen[1][step]) == list(range(step % 8 * 8, step % 8 * 8 + 8))
    run.assert_params_equal()


@pytest.mark.torchrun
def test_batches_sliced_by_the_batch_number_from_unseeded_data_are_split_across_ranks(tmp_path: Path) -> None:
    """``X[step * B:(step + 1) * B]`` in a loop over ``range(n // B)``, from data drawn in main()
    with no seed at all: setup starts every rank from one seed, so the data agree, and each rank
    takes its disjoint part of every training batch (4 + 4 rows of the 8); the same loop run for
    the test pass (no gradients, eval mode) gives every rank the whole batch, as one process
    evaluates; the parameters end equal."""
    script = _converted("sliced_by_batch_number", tmp_path)
    assert "ddpify.batch_part(X[step * B:(step + 1) * B])" in script.read_text()
    run = run_script(script, cwd=tmp_path).assert_ok()
    seen = [json.loads((tmp_path / f"rows_{rank}.json").read_text()) for rank in (0, 1)]
    assert seen[0]["data"] == seen[1]["data"]
    assert len(seen[0]["train"]) == len(seen[1]["train"]) == 16
    for step in range(16):
        assert len(seen[0]["train"][step]) == len(seen[1]["train"][step]) == 4
        assert sorted(seen[0]["train"][step] + seen[1]["train"][step]) == list(range(step % 8 * 8, step % 8 * 8 + 8))
        assert seen[0]["test"][step] == seen[1]["test"][step] == list(range(step % 8 * 8, step % 8 * 8 + 8))
    run.assert_params_equal()


@pytest.mark.torchrun
def test_an_iterator_class_of_the_script_is_cut_batch_by_batch(tmp_path: Path) -> None:
    """``BatchIterator`` reshuffles with the global RNG at every pass while dropout draws from it
    too: the iterator's own random state keeps both ranks on the same order (4 + 4 disjoint rows
    of every batch, each epoch a new order covering the data), and the parameters end equal."""
    script = _converted("iterator_class", tmp_path)
    assert "batches = ddpify.shard(BatchIterator(" in script.read_text()
    run = run_script(script, cwd=tmp_path).assert_ok()
    seen = [json.loads((tmp_path / f"rows_{rank}.json").read_text()) for rank in (0, 1)]
    assert len(seen[0]) == len(seen[1]) == 16
    for step in range(16):
        assert len(seen[0][step]) == len(seen[1][step]) == 4 and not set(seen[0][step]) & set(seen[1][step])
    epochs = [sorted(i for rank in (0, 1) for batch in seen[rank][e * 8 : (e + 1) * 8] for i in batch) for e in (0, 1)]
    assert epochs == [list(range(64)), list(range(64))]
    assert seen[0][:8] != seen[0][8:]  # reshuffled
    run.assert_params_equal()


@pytest.mark.torchrun
def test_a_project_model_that_drops_a_layer_output_trains_with_find_unused_parameters(tmp_path: Path) -> None:
    """unseen20k's pixelcnn_main: the model class lives in a module of the project, and its
    forward keeps one of the two streams of its last gated layer. Read from that module, the
    dropped output gets the wrap find_unused_parameters=True, and both ranks train in sync;
    without it DDP stops (the control run)."""
    (tmp_path / "gated_layers.py").write_text((DATA / "gated_layers.py").read_text())
    source = tmp_path / "gated_stack_train.py"
    source.write_text((DATA / "gated_stack_train.py").read_text())
    result = convert_source(source.read_text(), filename=str(source))
    assert any("model's forward drops the x_v output of its last layers call" in c.what for c in result.changes)
    script = tmp_path / "gated_stack_train_ddp.py"
    script.write_text(result.output)
    assert "model = ddpify.prepare_model(model, find_unused_parameters=True)" in result.output
    run = run_script(script, cwd=tmp_path).assert_ok()
    run.assert_params_equal()
    control = tmp_path / "control_ddp.py"
    control.write_text(result.output.replace("ddpify.prepare_model(model, find_unused_parameters=True)", "ddpify.prepare_model(model)"))
    failed = run_script(control, cwd=tmp_path)
    assert failed.returncode != 0 and "find_unused_parameters" in failed.stdout + failed.stderr


@pytest.mark.torchrun
def test_a_batch_size_handed_to_a_helper_that_sizes_targets_keeps_the_per_process_batch(tmp_path: Path) -> None:
    """Issue 20, class 11: ``make_targets(BATCH_SIZE, 1.0)`` builds the loss targets: the loader
    keeps 8 rows per rank (the report says why), so the targets match the batch and both ranks
    train to the end in sync."""
    script = _converted("targets_helper", tmp_path)
    assert "per_process_batch=True" in script.read_text()
    run = run_script(script, cwd=tmp_path).assert_ok()
    train = run.loader_seq(64)
    assert run.batch_sizes(0, train, 1) == [8, 8, 8, 8]
    run.assert_params_equal()


@pytest.mark.torchrun
def test_event_writers_made_by_project_helpers_write_once(tmp_path: Path) -> None:
    """Issue 20, class 9: a TensorBoard writer returned by a helper of the project
    (``make_writer(log_dir)``) and one held by a project class (``Recorder``): built on rank 0
    only (``ddpify.rank_zero``), so each run folder gets one event file, with rank 0's steps
    (8 per epoch, as one process takes), not one file per rank."""
    folder = DATA / "writer_helper"
    for name in ("tensorboardX.py", "log_utils.py"):
        (tmp_path / name).write_text((folder / name).read_text())
    source = tmp_path / "train.py"
    source.write_text((folder / "train.py").read_text())
    result = convert_source(source.read_text(), filename=str(source))
    assert 'writer = ddpify.rank_zero(make_writer)("runs/loss")' in result.output
    assert 'recorder = ddpify.rank_zero(Recorder)("runs/extra")' in result.output
    assert not result.manual, result.manual
    script = tmp_path / "train_ddp.py"
    script.write_text(result.output)
    run_script(script, cwd=tmp_path).assert_ok()
    for run_folder in ("runs/loss", "runs/extra"):
        events = list((tmp_path / run_folder).iterdir())
        assert len(events) == 1, events
        assert len(events[0].read_text().splitlines()) == 16


@pytest.mark.torchrun
def test_early_stopping_on_the_training_loss_stops_every_rank_at_once(tmp_path: Path) -> None:
    """Issue 20, class 8: ``epoch_loss = ddpify.mean_over_ranks(total / len(loader))``: both ranks
    take the same decisions from it, so the run ends (no hang) with both ranks stopped at the same
    epoch, equal parameters, and one best checkpoint without ``module.`` keys."""
    script = _converted("early_stopping", tmp_path)
    assert "    epoch_loss = ddpify.mean_over_ranks(total / len(loader))\n" in script.read_text()
    # a rank stopping alone leaves the other in DDP's all-reduce (or the checkpoint's wait) for
    # ever: ending at all, once, means both stopped at the same epoch (unreduced, it hangs)
    run = run_script(script, cwd=tmp_path, timeout=120).assert_ok()
    assert len(re.findall(r"stopped at epoch \d+", run.stdout)) == 1, run.describe()
    run.assert_params_equal()
    assert not any(k.startswith("module.") for k in torch.load(tmp_path / "best.pt"))


@pytest.mark.torchrun
def test_a_set_ordered_in_a_project_module_is_ordered_alike_on_every_rank(tmp_path: Path) -> None:
    """unseen20k's pygcn_train (found by its judge): the classes are numbered in the order of
    ``set(labels)`` inside a module of the project, which the conversion does not rewrite; each
    process seeds its string hashes apart, so each rank numbered the classes differently. The
    conversion sets up with ``same_string_hashes=True``: each rank restarts once with
    PYTHONHASHSEED=0, and both number the classes alike (also when the launch set no seed)."""
    folder = DATA / "set_in_module"
    (tmp_path / "label_utils.py").write_text((folder / "label_utils.py").read_text())
    source = tmp_path / "train.py"
    source.write_text((folder / "train.py").read_text())
    result = convert_source(source.read_text(), filename=str(source))
    assert "ddpify.setup(same_string_hashes=True)" in result.output
    script = tmp_path / "train_ddp.py"
    script.write_text(result.output)
    run = run_script(script, cwd=tmp_path, env={"PYTHONHASHSEED": ""}).assert_ok()
    numbered = [json.loads((tmp_path / f"labels_{rank}.json").read_text()) for rank in (0, 1)]
    assert numbered[0] == numbered[1]
    run.assert_params_equal()


@pytest.mark.torchrun
def test_tensors_sized_by_the_batch_size_see_full_batches_on_every_rank(tmp_path: Path) -> None:
    """Loss targets and noise made with the configured batch size: the converter keeps the
    per-process batch (split, it would not match them), and each rank's shard of 272, not a
    whole number of batches of 32 where the 544 samples are, drops its last partial batch: no
    size mismatch, every batch 32 on both ranks, disjoint shards, equal parameters."""
    script = _converted("batch_sized_targets", tmp_path)
    assert "per_process_batch=True" in script.read_text()
    run = run_script(script, cwd=tmp_path).assert_ok()
    assert "each rank drops its last partial batch" in run.stderr
    train = run.loader_seq(544)
    for rank in (0, 1):
        for epoch in (0, 1):
            assert run.batch_sizes(rank, train, epoch) == [32] * 8
    shards = [set(run.indices(rank, train, 0)) for rank in (0, 1)]
    assert not shards[0] & shards[1]
    run.assert_params_equal()
    run.assert_only_rank0_saves()


@pytest.mark.torchrun
def test_an_optimizer_rebuilt_every_epoch_trains_the_wrapped_model(tmp_path: Path) -> None:
    """The optimizer built at the top of each epoch, in the loop that trains (the golden fixture
    optimizer_rebuilt_per_epoch): the wrap goes before that loop, so every step is a DDP step.
    Placed after the loop (as it once was), each rank trained its own model on its shard and the
    parameters parted ways."""
    source = Path(__file__).resolve().parents[1] / "fixtures" / "convert" / "optimizer_rebuilt_per_epoch" / "input.py"
    script = tmp_path / "rebuilt_ddp.py"
    script.write_text(convert_source(source.read_text()).output)
    text = script.read_text()
    assert text.index("model = ddpify.prepare_model(model)") < text.index("for epoch in range(4):")
    run = run_script(script, cwd=tmp_path).assert_ok()
    train = run.loader_seq(256)
    run.assert_disjoint_cover(train, 0, dataset_len=256)
    run.assert_params_equal()
    run.assert_only_rank0_saves()


@pytest.mark.torchrun
def test_a_student_trained_inside_a_distiller_is_wrapped_through_it(tmp_path: Path) -> None:
    """Issue 20 (unseen20l): the student handed to a Distiller(t_net, s_net) module, which runs
    the teacher under torch.no_grad(). The distiller is wrapped (its forward is the one the
    training calls) with find_unused_parameters=True for the teacher; the student gets no
    wrapper of its own, which would never run. Before: the student was wrapped too and the
    run stopped at the first backward, the teacher's parameters waiting for gradients."""
    source = Path(__file__).resolve().parents[1] / "fixtures" / "convert" / "student_inside_distiller" / "input.py"
    script = tmp_path / "distill_ddp.py"
    script.write_text(convert_source(source.read_text()).output)
    text = script.read_text()
    assert "distiller = ddpify.prepare_model(distiller, find_unused_parameters=True)" in text
    assert "s_net = ddpify.prepare_model" not in text
    run = run_script(script, cwd=tmp_path).assert_ok()
    train = run.loader_seq(128)
    for epoch in (0, 1):
        run.assert_disjoint_cover(train, epoch, dataset_len=128)
    run.assert_reshuffled(train)
    run.assert_params_equal()
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()


@pytest.mark.torchrun
def test_a_model_handed_to_a_trainer_with_unused_entry_points_is_wrapped(tmp_path: Path) -> None:
    """Issue 20, class 1 (unseen20l's advtrain_mnist): trainer methods nothing calls no longer
    make the model's origin unknown; the model main() builds is wrapped there and its loader
    sharded. Before, nothing was wrapped and every rank trained its own model on all the data."""
    script = _converted("trainer_with_unused_entry_points", tmp_path)
    text = script.read_text()
    assert text.index("model = ddpify.prepare_model(model)") > text.index("def main():")
    run = run_script(script, cwd=tmp_path).assert_ok()
    train = run.loader_seq(128)
    for epoch in (0, 1):
        run.assert_disjoint_cover(train, epoch, dataset_len=128)
    run.assert_reshuffled(train)
    run.assert_params_equal()
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()


@pytest.mark.torchrun
def test_a_student_handed_to_its_loss_module_trains_as_ddp(tmp_path: Path) -> None:
    """Issue 20 (unseen20m's kdstudy_distill): criterion(x, y, student, teacher) runs the student
    inside the loss module; train() moves it and then trains it. The wrap goes in train(), after
    the move (before: the student was not wrapped, 'kept in a dict', and the loader stayed
    unsharded; with the dict fixed, the wrap went after train() had run)."""
    source = Path(__file__).resolve().parents[1] / "fixtures" / "convert" / "student_handed_to_loss_module" / "input.py"
    script = tmp_path / "kd_ddp.py"
    script.write_text(convert_source(source.read_text()).output)
    text = script.read_text()
    assert text.index("student = ddpify.prepare_model(student)") < text.index("for epoch in range(epochs):")
    run = run_script(script, cwd=tmp_path).assert_ok()
    train = run.loader_seq(64)
    for epoch in (0, 1):
        run.assert_disjoint_cover(train, epoch, dataset_len=64)
    run.assert_params_equal()
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()


@pytest.mark.torchrun
def test_a_run_folder_named_from_the_folders_contents_is_one_folder(tmp_path: Path) -> None:
    """Issue 20 (unseen20m's kdstudy_distill): run_dir = exp{len(os.listdir(root)) + 1}. Each
    rank once listed the folder at its own moment: a rank that came after rank 0 created exp1
    named exp2 and crashed reading its checkpoint back. ddpify.agreed gives every rank rank 0's
    name: one run folder, the checkpoint read back on every rank."""
    source = Path(__file__).resolve().parents[1] / "fixtures" / "convert" / "run_folder_named_from_listing" / "input.py"
    script = tmp_path / "runs_ddp.py"
    script.write_text(convert_source(source.read_text()).output)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "exp1").mkdir()  # an earlier run: this one is exp2 on every rank
    run = run_script(script, cwd=tmp_path).assert_ok()
    run.assert_params_equal()
    run.assert_only_rank0_saves()
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["exp1", "exp2"]
    assert (tmp_path / "checkpoints" / "exp2" / "last.pth").is_file()


@pytest.mark.torchrun
def test_a_file_rank_zero_writes_alone_is_read_back_after_it_is_written(tmp_path: Path) -> None:
    """unseen20n's AnoGAN class: ``np.save`` moves under ``if ddpify.is_main_process():`` and
    the ``np.load`` of the same path every rank runs next waits for it (``ddpify.barrier()``
    before the read): every rank reads the file rank 0 wrote, none finds it missing."""
    script = _converted("read_back_after_rank_zero_write", tmp_path)
    text = script.read_text()
    assert '        np.save(f"samples_{epoch}.npy", samples)\n    ddpify.barrier()\n    grid = np.load(' in text
    run = run_script(script, cwd=tmp_path, timeout=120).assert_ok()
    run.assert_params_equal()
    assert sorted(p.name for p in tmp_path.glob("samples_*.npy")) == ["samples_0.npy", "samples_1.npy"]
    assert len(re.findall(r"epoch \d grid mean", run.stdout)) == 2, run.describe()

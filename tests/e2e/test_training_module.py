"""Run-time proof for issue 20, class 1 across files: the entry script trains nothing itself, a
``Trainer`` class of a sibling module builds the model and trains it on a loader the script
hands in. ``ddpify main.py -o main_ddp.py`` converts ``trainer.py`` alongside; under torchrun
with 2 CPU processes the shards are disjoint, cover the data and reshuffle, one checkpoint is
saved without ``module.`` keys, and the parameters end equal."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

PROJECT = Path(__file__).resolve().parent / "data" / "trainer_module_project"


def _assert_trained_as_ddp(run, loaders: list[int]) -> None:
    """Each training loader's two epochs: disjoint shards that cover its 64 samples, reshuffled;
    one checkpoint, written by rank 0, without ``module.`` keys; equal parameters at the end."""
    for loader in loaders:
        for epoch in (0, 1):
            run.assert_disjoint_cover(loader, epoch, dataset_len=64)
        run.assert_reshuffled(loader)
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()
    run.assert_params_equal()


def _convert_project(tmp_path: Path, project: Path, names: tuple[str, ...], script: str, output: str) -> subprocess.CompletedProcess[str]:
    """Copy the project's files into ``tmp_path`` and run ``ddpify script -o output`` there."""
    for name in names:
        shutil.copy(project / name, tmp_path / name)
    converted = subprocess.run(
        [sys.executable, "-m", "ddpify", script, "-o", output], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert converted.returncode == 0, converted.stderr
    return converted


@pytest.mark.torchrun
def test_training_in_a_sibling_module_runs_as_ddp(tmp_path: Path) -> None:
    converted = _convert_project(tmp_path, PROJECT, ("main.py", "trainer.py", "data_loader.py"), "main.py", "main_ddp.py")
    assert "needs a human" not in converted.stderr, converted.stderr
    run = run_script(tmp_path / "main_ddp.py", ["--epochs", "2"], cwd=tmp_path).assert_ok()
    loader = run.loader_seq(64, nth=1)  # rebuilt sharded by ddpify.shard in Trainer.__init__
    _assert_trained_as_ddp(run, [loader])
    plain = run_script(tmp_path / "main_ddp.py", ["--epochs", "1"], nproc=None, cwd=tmp_path)
    plain.assert_ok()  # still one process, like the original


HANDED_IN = Path(__file__).resolve().parent / "data" / "handed_in_model_project"


@pytest.mark.torchrun
def test_model_handed_to_a_training_function_of_a_sibling_module(tmp_path: Path) -> None:
    """``run.py`` builds the model and a batch iterator of the project's own (no DataLoader)
    and hands both to ``train()`` of ``train_eval.py``: the model is wrapped where ``train``
    receives it, and each batch is cut across the ranks (the global batch stays 8)."""
    converted = _convert_project(tmp_path, HANDED_IN, ("run.py", "train_eval.py", "utils.py"), "run.py", "run_ddp.py")
    assert "needs a human" not in converted.stderr, converted.stderr
    assert "    model = ddpify.prepare_model(model)\n" in (tmp_path / "train_eval_ddp.py").read_text()
    run = run_script(tmp_path / "run_ddp.py", cwd=tmp_path).assert_ok()
    seen = [json.loads((tmp_path / f"seen_{rank}.json").read_text()) for rank in (0, 1)]
    assert len(seen[0]) == len(seen[1]) == 16  # 8 steps per epoch on each rank, as one process took
    for step in range(16):
        assert len(seen[0][step]) == len(seen[1][step]) == 4 and not set(seen[0][step]) & set(seen[1][step])
    for epoch in (0, 1):
        rows = [i for rank in (0, 1) for batch in seen[rank][epoch * 8 : (epoch + 1) * 8] for i in batch]
        assert sorted(rows) == list(range(64))
    run.assert_only_rank0_saves()
    run.assert_no_module_keys()
    run.assert_params_equal()
    plain = run_script(tmp_path / "run_ddp.py", nproc=None, cwd=tmp_path)
    plain.assert_ok()  # still one process, like the original


GAN_STEPS = Path(__file__).resolve().parent / "data" / "gan_steps_project"


@pytest.mark.torchrun
def test_training_steps_of_a_sibling_class_train_both_models_as_ddp(tmp_path: Path) -> None:
    """GAN_stability's shape: the script builds both models, gets their optimizers from a
    helper of one sibling module (``g_opt, d_opt = build_optimizers(G, D, lr)``), hands all
    four to a steps class of another (``steps = GanSteps(...)``) and feeds it the batches of
    its own loop (``steps.discriminator_step(real, z)``). Both models are wrapped where
    DataParallel was, the loader is sharded and reshuffled (its per-process batch kept, since
    ``z`` is sized by the batch variable), the run ends with equal parameters, and the print in
    the project's ``builders.py`` shows once."""
    converted = _convert_project(tmp_path, GAN_STEPS, ("train.py", "steps.py", "builders.py"), "train.py", "train_ddp.py")
    output = (tmp_path / "train_ddp.py").read_text()
    assert "generator = ddpify.prepare_model(generator)" in output and "discriminator = ddpify.prepare_model(discriminator)" in output
    assert "DataParallel" not in output and "the DDP model" not in converted.stderr
    run = run_script(tmp_path / "train_ddp.py", cwd=tmp_path).assert_ok()
    assert run.stdout.count("optimizers built: Adam, lr") == 1  # a print of a project module: rank 0's only
    assert run.stdout.count("epoch 1 d_loss") == 1
    loader = run.loader_seq(64)
    _assert_trained_as_ddp(run, [loader])
    run_script(tmp_path / "train_ddp.py", ["--epochs", "1"], nproc=None, cwd=tmp_path).assert_ok()


BUILDS_LOADER = Path(__file__).resolve().parent / "data" / "trainer_builds_loader_project"


@pytest.mark.torchrun
def test_a_trainer_that_builds_its_own_loader_is_converted_alongside_the_script_that_wraps(tmp_path: Path) -> None:
    """PyTorch-BYOL's shape: the script builds the models and their optimizer (so it wraps
    them) and hands them to a ``Trainer`` of a sibling module that builds its own loader from
    the dataset, makes its run folder (exists-then-makedirs) and saves its models' state.
    ``trainer.py`` is converted alongside, told that the models it gets are DDP models: its
    loader is sharded and reshuffled, the folder made on rank 0 first, one checkpoint saved
    without ``module.`` keys, and the parameters end equal."""
    converted = _convert_project(tmp_path, BUILDS_LOADER, ("main.py", "trainer.py", "utils.py"), "main.py", "main_ddp.py")
    assert "needs a human" not in converted.stderr, converted.stderr
    assert "from trainer_ddp import Trainer" in (tmp_path / "main_ddp.py").read_text()
    assert "encoder = ddpify.prepare_model(encoder" in (tmp_path / "main_ddp.py").read_text()
    run = run_script(tmp_path / "main_ddp.py", cwd=tmp_path).assert_ok()
    loader = run.loader_seq(64)
    _assert_trained_as_ddp(run, [loader])
    run_script(tmp_path / "main_ddp.py", ["--epochs", "1"], nproc=None, cwd=tmp_path).assert_ok()


CONTAINER = Path(__file__).resolve().parent / "data" / "nets_in_a_container_project"


@pytest.mark.torchrun
def test_nets_a_helper_builds_into_a_dict_are_wrapped_by_the_run(tmp_path: Path) -> None:
    """Issue 20 (stargan-v2's shape): ``self.nets, self.nets_ema = build_nets(args)`` of a
    sibling module, one optimizer per trained net made in a loop under ``if args.mode ==
    "train":``, the loaders in an attribute dict the script builds and hands to
    ``solver.train``. The end of ``Solver.__init__`` gets ``ddpify.prepare_trained(self.nets,
    self.optims)`` under the same test (the run wraps the generator and discriminator; the
    frozen net and the EMA copy stay plain), the script shards its loaders for the passes that
    train, and the solver's report claims no unsharded data. Under torchrun: disjoint,
    reshuffled shards, one plain checkpoint, equal parameters; one process runs as before."""
    names = ("main.py", "solver.py", "nets.py")
    converted = _convert_project(tmp_path, CONTAINER, names, "main.py", "main_ddp.py")
    assert "needs a human" not in converted.stderr, converted.stderr
    solver = (tmp_path / "solver_ddp.py").read_text()
    assert '        self.to(self.device)\n        if args.mode == "train":\n            ddpify.prepare_trained(self.nets, self.optims)\n' in solver
    assert "loaders = ddpify.shard(loaders, only_when_training=True)" in (tmp_path / "main_ddp.py").read_text()
    run = run_script(tmp_path / "main_ddp.py", ["--epochs", "2"], cwd=tmp_path).assert_ok()
    loader = run.loader_seq(64, nth=1)  # the plain loader first (never iterated), then the sharded one
    _assert_trained_as_ddp(run, [loader])
    run_script(tmp_path / "main_ddp.py", ["--epochs", "1"], nproc=None, cwd=tmp_path).assert_ok()


BY_NAME = Path(__file__).resolve().parent / "data" / "algorithm_by_name_project"


@pytest.mark.torchrun
def test_an_algorithm_class_picked_by_name_trains_as_ddp(tmp_path: Path) -> None:
    """Issue 20 (unseen20g's DomainBed): ``vars(algorithms)[args.algorithm](...)`` then
    ``algorithm.to(device)``; the module converted alongside wraps ``self.network`` at the end
    of the constructor, on this rank's device first. Under torchrun: disjoint, reshuffled
    shards, one checkpoint with the original keys, equal parameters."""
    converted = _convert_project(tmp_path, BY_NAME, ("train.py", "algorithms.py"), "train.py", "train_ddp.py")
    assert "needs a human" not in converted.stderr, converted.stderr
    assert "self.network = ddpify.prepare_model(self.network, on_rank_device=True)" in (tmp_path / "algorithms_ddp.py").read_text()
    run = run_script(tmp_path / "train_ddp.py", cwd=tmp_path).assert_ok()
    iterated = [ld["seq"] for ld in run.loaders(0) if ld["dataset_len"] == 64 and ld["epochs"]]
    assert len(iterated) == 2, run.describe()  # the two training loaders, sharded at their first training pass
    _assert_trained_as_ddp(run, iterated)


SOLVER = Path(__file__).resolve().parent / "data" / "solver_saves_project"


@pytest.mark.torchrun
def test_a_solver_given_the_data_and_the_ddp_model_is_converted_alongside(tmp_path: Path) -> None:
    """Conv-TasNet's shape (unseen20i): the script builds its loaders (a DataLoader subclass
    that only sets its collate_fn), the model (an nn.DataParallel) and the optimizer, and hands
    them all to a ``Solver`` of a sibling module that trains, prints and saves through
    ``self.model.module``. The script shards its loaders (the subclass rebuilt as a plain
    DataLoader) and ``solver.py`` is converted alongside, so its checkpoints are written once
    and without ``module.`` keys; one process keeps the DataParallel the solver reads."""
    converted = _convert_project(tmp_path, SOLVER, ("train.py", "solver.py", "data.py"), "train.py", "train_ddp.py")
    assert "from solver_ddp import Solver" in (tmp_path / "train_ddp.py").read_text()
    assert "ddpify.save(ddpify.unwrap(self.model).serialize(" in (tmp_path / "solver_ddp.py").read_text()
    assert "written once per rank" not in converted.stderr
    run = run_script(tmp_path / "train_ddp.py", cwd=tmp_path).assert_ok()
    loader = run.loader_seq(64, nth=1)  # the subclass first (never iterated sharded), then its plain rebuild
    _assert_trained_as_ddp(run, [loader])
    assert run.stdout.count("epoch 2 train loss") == 1
    run_script(tmp_path / "train_ddp.py", ["--epochs", "1", "--save_folder", "plain"], nproc=None, cwd=tmp_path).assert_ok()
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == ["best.pth", "epoch1.pth"]


NESTED = Path(__file__).resolve().parent / "data" / "nested_trainer_project"


@pytest.mark.torchrun
def test_training_two_modules_deep_is_converted_with_the_module_between(tmp_path: Path) -> None:
    """Deep-SVDD's shape (unseen20i): the script builds an ``Experiment`` of experiment.py and
    calls its ``train`` and ``save_model``; the loop is in engine/trainer.py, whose
    ``Trainer.train(self, dataset, net)`` the experiment runs. Both modules are converted
    alongside: the trainer wraps the net it is handed and shards its own loader, the experiment
    imports the converted trainer and saves once, and the script leaves ``save_model`` on
    every rank (its ``ddpify.save`` waits for all of them: a rank-0 guard around it would hang)."""
    (tmp_path / "engine").mkdir()
    names = ("main.py", "experiment.py", "engine/__init__.py", "engine/trainer.py")
    converted = _convert_project(tmp_path, NESTED, names, "main.py", "main_ddp.py")
    assert "needs a human" not in converted.stderr, converted.stderr
    assert "from experiment_ddp import Experiment" in (tmp_path / "main_ddp.py").read_text()
    assert "from engine.trainer_ddp import Trainer" in (tmp_path / "experiment_ddp.py").read_text()
    assert "net = ddpify.prepare_model(net)" in (tmp_path / "engine" / "trainer_ddp.py").read_text()
    assert "\nexperiment.save_model(args.out)" in (tmp_path / "main_ddp.py").read_text()  # not under a rank-0 guard
    run = run_script(tmp_path / "main_ddp.py", cwd=tmp_path).assert_ok()
    _assert_trained_as_ddp(run, [run.loader_seq(64)])
    assert run.stdout.count("final loss") == 1
    run_script(tmp_path / "main_ddp.py", ["--epochs", "1", "--out", "plain.pt"], nproc=None, cwd=tmp_path).assert_ok()
    assert (tmp_path / "plain.pt").is_file()


BALANCED = Path(__file__).resolve().parent / "data" / "balanced_batches_project"


@pytest.mark.torchrun
def test_loaders_an_object_of_a_sibling_module_keeps_are_sharded_in_place(tmp_path: Path) -> None:
    """Issue 20 (unseen20m's textrec_train): the training batches come from get_batch() of an
    object a sibling module's class makes, which keeps one DataLoader per data source and an
    iterator over each. Before, nothing sharded them and nothing said so: every rank trained on
    the same batches. ``train_dataset = ddpify.shard(train_dataset)`` now shards the loaders it
    keeps, in place: each loader's two passes are disjoint shards that cover it, reshuffled."""
    converted = _convert_project(tmp_path, BALANCED, ("train.py", "dataset.py"), "train.py", "train_ddp.py")
    assert "needs a human" not in converted.stderr, converted.stderr
    assert "train_dataset = ddpify.shard(train_dataset)" in (tmp_path / "train_ddp.py").read_text()
    run = run_script(tmp_path / "train_ddp.py", cwd=tmp_path).assert_ok()
    _assert_trained_as_ddp(run, [run.loader_seq(64, nth=n) for n in (2, 3)])  # the rebuilds (0, 1: the loaders replaced)

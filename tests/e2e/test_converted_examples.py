"""The product's promise, checked by running converted scripts for real (CPU, gloo, 2 ranks):
disjoint shards covering the data, a new shared permutation every epoch, saves on rank 0 only
without ``module.`` keys, identical parameters and generated data on both ranks, and the
same result as the single-process original."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import RunResult, run_script  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = Path(__file__).resolve().parent / "data"

# example -> (train set size, global batch, eval set size or None, checkpoint files, args)
CASES = {
    "cnn_classifier": (512, 32, 128, ["checkpoint.pt", "best.pt"], ["--epochs", "2"]),
    "trainer_class": (1024, 32, None, ["trainer_ckpt.pt"], ["--epochs", "2"]),
    "legacy_dataparallel": (2048, 64, None, ["model_final.pth"], ["--epochs", "2"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_converted_twin_is_up_to_date(name: str) -> None:
    source = (EXAMPLES / name / "train.py").read_text()
    twin = (EXAMPLES / name / "train_ddp.py").read_text()
    assert convert_source(source).output == twin, f"regenerate: ddpify examples/{name}/train.py -o examples/{name}/train_ddp.py"


@pytest.mark.torchrun
@pytest.mark.parametrize("name", sorted(CASES))
def test_converted_example_trains_correctly_on_two_ranks(name: str, tmp_path: Path) -> None:
    train_len, batch, eval_len, checkpoints, args = CASES[name]
    run = run_script(EXAMPLES / name / "train_ddp.py", [*args, "--out-dir", str(tmp_path)], cwd=tmp_path).assert_ok()

    train = run.loader_seq(train_len)
    for epoch in (0, 1):
        run.assert_disjoint_cover(train, epoch, dataset_len=train_len)
        # the global batch is preserved: each rank takes half of it
        assert set(run.batch_sizes(0, train, epoch)) == {batch // 2}
    run.assert_reshuffled(train, 0, 1)
    assert run.global_order(train, 0) != list(range(train_len)), "training data was not shuffled"

    if eval_len is not None:  # evaluation stays unsharded: every rank sees the whole set
        val = run.loader_seq(eval_len)
        for rank in (0, 1):
            assert sorted(run.indices(rank, val, 0)) == list(range(eval_len))

    run.assert_only_rank0_saves()
    run.assert_no_module_keys()
    run.assert_params_equal()
    run.assert_datasets_equal()
    for checkpoint in checkpoints:
        state = torch.load(tmp_path / checkpoint, map_location="cpu")
        keys = state["model"].keys() if "model" in state else state.keys()
        assert keys and not any(k.startswith("module.") for k in keys)


@pytest.mark.parametrize("name", sorted(CASES))
def test_converted_example_without_launcher_matches_original(name: str, tmp_path: Path) -> None:
    """``python train_ddp.py`` is one process and computes exactly what the original does."""
    _, _, _, checkpoints, _ = CASES[name]
    results = {}
    for script in ("train.py", "train_ddp.py"):
        out = tmp_path / script
        out.mkdir()
        run_script(EXAMPLES / name / script, ["--epochs", "1", "--out-dir", str(out)], nproc=None, cwd=out, trace=False).assert_ok()
        results[script] = torch.load(out / checkpoints[-1], map_location="cpu")
    original, converted = results["train.py"], results["train_ddp.py"]
    original = original.get("model", original)
    converted = converted.get("model", converted)
    assert original.keys() == converted.keys()
    for key in original:
        assert torch.equal(original[key], converted[key]), key


@pytest.mark.torchrun
@pytest.mark.parametrize("script_name", ["equivalence_train.py", "equivalence_accumulation.py"])
def test_two_ranks_end_where_one_process_ends(script_name: str, tmp_path: Path) -> None:
    """No shuffle, dropout or BatchNorm: DDP with the global batch split over 2 ranks must
    reproduce the single-process run's parameters (also with gradient accumulation, where the
    non-stepping micro-batches skip the all-reduce)."""
    script = DATA / script_name
    converted = tmp_path / "equivalence_ddp.py"
    converted.write_text(convert_source(script.read_text()).output)
    if "accumulation" in script_name:
        assert "ddpify.sync_gradients(model, when=" in converted.read_text()
    single, double = tmp_path / "single", tmp_path / "double"
    single.mkdir()
    double.mkdir()
    run_script(script, ["--out-dir", str(single)], nproc=None, cwd=single, trace=False).assert_ok()
    run: RunResult = run_script(converted, ["--out-dir", str(double)], cwd=double).assert_ok()
    run.assert_params_equal()
    expected = torch.load(single / "final.pt")
    actual = torch.load(double / "final.pt")
    assert expected.keys() == actual.keys()
    for key in expected:
        torch.testing.assert_close(actual[key], expected[key], atol=1e-5, rtol=0)


@pytest.mark.torchrun
def test_converted_example_resumes_from_a_module_prefixed_checkpoint(tmp_path: Path) -> None:
    """A checkpoint written by an old nn.DataParallel run ("module." keys) resumes on 2 ranks."""
    run_script(EXAMPLES / "cnn_classifier" / "train.py", ["--epochs", "1", "--out-dir", str(tmp_path)],
               nproc=None, cwd=tmp_path, trace=False).assert_ok()
    checkpoint = torch.load(tmp_path / "checkpoint.pt")
    checkpoint["model"] = {f"module.{k}": v for k, v in checkpoint["model"].items()}
    torch.save(checkpoint, tmp_path / "dp_checkpoint.pt")
    run = run_script(EXAMPLES / "cnn_classifier" / "train_ddp.py",
                     ["--epochs", "2", "--resume", str(tmp_path / "dp_checkpoint.pt"), "--out-dir", str(tmp_path)],
                     cwd=tmp_path).assert_ok()
    train = run.loader_seq(512)
    assert run.num_epochs(0, train) == 1, "resumed at epoch 1 of 2"
    run.assert_params_equal()
    resumed = torch.load(tmp_path / "checkpoint.pt")
    assert resumed["epoch"] == 1 and not any(k.startswith("module.") for k in resumed["model"])


@pytest.mark.torchrun
def test_once_only_writes_happen_once_on_two_ranks(tmp_path: Path) -> None:
    """Logs the single-process script wrote once are written once, by rank 0, not once per rank;
    the whole-model pickle holds the plain module, not the DDP wrapper."""
    converted = tmp_path / "once_only_writes_ddp.py"
    converted.write_text(convert_source((DATA / "once_only_writes.py").read_text()).output)
    run = run_script(converted, ["--epochs", "3", "--out-dir", str(tmp_path)], cwd=tmp_path).assert_ok()
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert rows[0] == "epoch,loss" and [r.split(",")[0] for r in rows[1:]] == ["0", "1", "2"]
    assert (tmp_path / "history.txt").read_text().splitlines() == ["epoch 0", "epoch 1", "epoch 2"]
    assert run.stdout.count("progress-line") == 3 * 4, "4 batches per rank and epoch, written by rank 0 only"
    assert type(torch.load(tmp_path / "model.pt", weights_only=False)) is torch.nn.Linear

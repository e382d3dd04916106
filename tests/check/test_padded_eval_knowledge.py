"""Issue 21: DDP015 (padded evaluation sampler) is right by default because it knows how the
evaluation combines what the padding repeats (the loops here gather their results across ranks). Not reported: a loop that keeps each sample's
result under a key read from its batch (HybrIK's predictions by image id, voxceleb's features by
file name behind ``with tqdm(loader) as bar``, DETR's ``{t["image_id"]: r ...}`` in a project
module's ``evaluate``), a loop only rank 0 runs (ParallelWaveGAN: the padding goes to the last
ranks), a loop whose accumulated metrics are never combined across ranks (rank 0 reads its own
shard, which the padding never reaches: DDP014's finding), and a training sampler that shares its variable name with an evaluation loader of
another function (ULTRA). Reported: results kept by batch counter or metric name, the same
evaluation in a project function that sums instead; predictions of a shard nobody gathers
(reported as a shard, not as padding)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules


def _lines(text: str, path: str = "<string>") -> list[int]:
    return [f.line for f in check_source(text, path, rules=select_rules(["DDP015"])).findings]


_SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from tqdm import tqdm


def evaluate(model, val_set):
    sampler = DistributedSampler(val_set, shuffle=False)
    loader = DataLoader(val_set, batch_size=4, sampler=sampler)
    results = {{}}
{loop}
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, results)
    return gathered
"""

_HARMLESS = {
    "predictions by image id": "    for images, ids in loader:\n        for i, out in enumerate(model(images)):\n            results[int(ids[i])] = out",
    "features by file name behind tqdm": (
        "    with tqdm(loader) as bar:\n        for data in bar:\n            feat = model(data[0]).detach()\n            results[data[1][0]] = feat"
    ),
    "a dict comprehension by id": "    for images, targets in loader:\n        results.update({t['id']: o for t, o in zip(targets, model(images))})",
    "only rank 0 evaluates": "    if dist.get_rank() == 0:\n        for x, y in loader:\n            results['loss'] = results.get('loss', 0) + model(x).sum()",
}
_HARMFUL = {
    "kept by batch counter": "    for step, (x, y) in enumerate(loader):\n        results[step] = (model(x).argmax(1) == y).sum()",
    "kept by metric name": "    for x, y in loader:\n        for name, value in {'acc': (model(x).argmax(1) == y).float().mean()}.items():\n            results[name] = value",
    "summed": "    correct = 0\n    for x, y in loader:\n        correct += (model(x).argmax(1) == y).sum()\n    results['acc'] = correct",
}


@pytest.mark.parametrize("loop", _HARMLESS.values(), ids=_HARMLESS.keys())
def test_padding_that_counts_once_is_not_reported(loop: str) -> None:
    assert _lines(_SCRIPT.format(loop=loop)) == []


@pytest.mark.parametrize("loop", _HARMFUL.values(), ids=_HARMFUL.keys())
def test_padding_that_counts_twice_is_reported(loop: str) -> None:
    assert _lines(_SCRIPT.format(loop=loop)) == [8]


def test_padding_of_results_never_combined_across_ranks_is_not_reported() -> None:
    """Each rank keeps its own sum and rank 0 reads its own shard, which the padding never
    reaches: the unreduced metric is DDP014's finding, not a second one here."""
    alone = _SCRIPT.replace("    gathered = [None] * dist.get_world_size()\n    dist.all_gather_object(gathered, results)\n    return gathered\n", "")
    assert _lines(alone.format(loop=_HARMFUL["summed"])) == []


def test_predictions_of_a_shard_never_combined_are_reported_as_a_shard() -> None:
    """BERT-NER's predict(): each rank appends its shard's predictions and writes them out;
    nothing gathers them. The padding does not matter there, the missing 1/N shares do: one
    finding, at the sampler, saying so (accumulated metrics are DDP014's)."""
    alone = _SCRIPT.replace("    gathered = [None] * dist.get_world_size()\n    dist.all_gather_object(gathered, results)\n    return gathered\n", "")
    loop = "    out = []\n    for x, y in loader:\n        out.append(model(x).argmax(1).tolist())\n    open('predictions.json', 'w').write(str(out))"
    findings = check_source(alone.format(loop=loop), rules=select_rules(["DDP015"])).findings
    assert [f.line for f in findings] == [8]
    assert "nothing combines the ranks' results" in findings[0].message


def test_a_training_sampler_named_like_another_functions_evaluation_sampler_is_not_reported() -> None:
    text = """\
import torch
from torch.utils.data import DataLoader, DistributedSampler


def train(model, train_set):
    sampler = DistributedSampler(train_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=4, sampler=sampler)
    for x, y in train_loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()


def test(model, test_set):
    sampler = DistributedSampler(test_set, shuffle=False)
    test_loader = DataLoader(test_set, batch_size=4, sampler=sampler)
    return sum((model(x).argmax(1) == y).sum() for x, y in test_loader)
"""
    assert _lines(text) == [13]


_ENGINE = """\
def evaluate(model, criterion, data_loader, evaluator):
    for samples, targets in logger.log_every(data_loader, 10):
        outputs = model(samples)
        results = postprocess(outputs)
{combine}
"""


@pytest.mark.parametrize(
    ("combine", "lines"),
    [
        ("        evaluator.update({target['image_id'].item(): output for target, output in zip(targets, results)})", []),
        ("        evaluator.update(results)", [5]),
    ],
)
def test_a_project_evaluation_that_keys_by_image_id_is_read(tmp_path: Path, combine: str, lines: list[int]) -> None:
    (tmp_path / "engine.py").write_text(_ENGINE.format(combine=combine), encoding="utf-8")
    main = tmp_path / "main.py"
    main.write_text(
        """\
import torch
from torch.utils.data import DataLoader, DistributedSampler
from engine import evaluate

sampler_val = DistributedSampler(dataset_val, shuffle=False)
data_loader_val = DataLoader(dataset_val, 2, sampler=sampler_val)
evaluate(model, criterion, data_loader_val, evaluator)
""",
        encoding="utf-8",
    )
    assert _lines(main.read_text(encoding="utf-8"), str(main)) == lines


def test_a_loader_that_drops_its_last_batch_is_reported_for_what_it_drops() -> None:
    """vdvae: the sampler pads, and the loader's drop_last=True drops each rank's partial last
    batch (padding or not): the message says the evaluated samples depend on the process count."""
    text = _SCRIPT.format(loop=_HARMFUL["summed"]).replace("batch_size=4, sampler=sampler)", "batch_size=4, sampler=sampler, drop_last=True)")
    findings = check_source(text, rules=select_rules(["DDP015"])).findings
    assert [f.line for f in findings] == [8]
    assert "drops each rank's partial last batch" in findings[0].message

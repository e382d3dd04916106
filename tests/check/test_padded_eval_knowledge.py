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


# A project module's loader builders (SSD's get_val_dataloader, PoinTr's dataset_builder,
# MeshTransformer's make_data_loader with a sampler factory): the sampler lives there, the
# evaluation here.
_BUILDERS = {
    "one loader, under a launch test": """\
import torch
from torch.utils.data import DataLoader


def get_loader(dataset, args):
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if args.distributed else None
    return DataLoader(dataset, batch_size=8, sampler=sampler)
""",
    "sampler and loader as a pair": """\
import torch


def get_loader(dataset, args):
    if args.distributed:
        sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=False)
        loader = torch.utils.data.DataLoader(dataset, batch_size=1, sampler=sampler)
    else:
        sampler = None
        loader = torch.utils.data.DataLoader(dataset, batch_size=1)
    return sampler, loader
""",
    "a sampler factory": """\
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler


def make_sampler(dataset, is_distributed):
    if is_distributed:
        return DistributedSampler(dataset, shuffle=False)
    return SequentialSampler(dataset)


def get_loader(dataset, args):
    return DataLoader(dataset, batch_size=8, sampler=make_sampler(dataset, args.distributed))
""",
    "a pair under a mode test, the sampler under dist.is_initialized()": """\
import torch
import torch.distributed as dist
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, SequentialSampler


def get_loader(dataset, args, is_train=True):
    if is_train:
        if dist.is_available() and dist.is_initialized():
            val_sampler = DistributedSampler(dataset)
        else:
            val_sampler = SequentialSampler(dataset)
        train_loader = DataLoader(dataset, batch_size=8)
        val_loader = DataLoader(dataset, batch_sampler=BatchSampler(val_sampler, batch_size=8, drop_last=False))
        return train_loader, val_loader
    return DataLoader(dataset, batch_size=8)
""",
}
_EVALUATION = """\
import torch
import torch.distributed as dist
from data import get_loader

{bind}


def validate(model, loader):
    correct = torch.zeros(1)
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum()
    dist.all_reduce(correct)
    return correct


validate(model, val_loader)
"""
_BINDS = {
    "one loader, under a launch test": "val_loader = get_loader(val_set, args)",
    "sampler and loader as a pair": "(train_sampler, train_loader), (_, val_loader) = get_loader(train_set, args), get_loader(val_set, args)",
    "a sampler factory": "val_loader = get_loader(val_set, args)",
    "a pair under a mode test, the sampler under dist.is_initialized()": "train_loader, val_loader = get_loader(val_set, args, is_train=True)",
}


@pytest.mark.parametrize("builder", _BUILDERS)
def test_an_evaluation_loader_a_project_builder_pads_is_reported_where_it_is_bound(tmp_path: Path, builder: str) -> None:
    (tmp_path / "data.py").write_text(_BUILDERS[builder], encoding="utf-8")
    main = tmp_path / "main.py"
    main.write_text(_EVALUATION.format(bind=_BINDS[builder]), encoding="utf-8")
    findings = check_source(main.read_text(encoding="utf-8"), str(main), rules=select_rules(["DDP015"])).findings
    assert [f.line for f in findings] == [5]
    assert "val_loader comes from get_loader()" in findings[0].message
    assert "pads the evaluation set" in findings[0].message


@pytest.mark.parametrize(
    "builder",
    [
        # the sampler drops the remainder: no padding
        _BUILDERS["one loader, under a launch test"].replace("DistributedSampler(dataset)", "DistributedSampler(dataset, drop_last=True)"),
        # drop_last passed through: the caller decides, the builder does not say
        _BUILDERS["one loader, under a launch test"]
        .replace("(dataset, args)", "(dataset, args, drop_last=False)")
        .replace("DistributedSampler(dataset)", "DistributedSampler(dataset, drop_last=drop_last)"),
        # a sampler only for shuffled loaders (generative-recommenders): the caller may get none
        _BUILDERS["one loader, under a launch test"].replace("if args.distributed", "if args.shuffle"),
    ],
    ids=["drop_last=True", "drop_last from a parameter", "built under another test"],
)
def test_a_project_builder_that_may_not_pad_is_not_reported(tmp_path: Path, builder: str) -> None:
    (tmp_path / "data.py").write_text(builder, encoding="utf-8")
    main = tmp_path / "main.py"
    main.write_text(_EVALUATION.format(bind="val_loader = get_loader(val_set, args)"), encoding="utf-8")
    assert _lines(main.read_text(encoding="utf-8"), str(main)) == []


def test_a_training_loader_from_a_project_builder_is_not_reported(tmp_path: Path) -> None:
    (tmp_path / "data.py").write_text(_BUILDERS["one loader, under a launch test"], encoding="utf-8")
    main = tmp_path / "main.py"
    main.write_text(_EVALUATION.format(bind="train_loader = get_loader(train_set, args)").replace("validate(model, val_loader)", "validate(model, train_loader)"), encoding="utf-8")
    assert _lines(main.read_text(encoding="utf-8"), str(main)) == []


def test_a_keyed_meter_made_under_a_batch_key_is_no_kept_result() -> None:
    """PoinTr: ``category_metrics[taxonomy_id] = AverageMeter()`` under a category read from the
    batch, then ``.update(metrics)``: the repeats are counted twice, nothing overwrites."""
    loop = (
        "    for x, (y, category) in loader:\n"
        "        if category not in results:\n"
        "            results[category] = Meter()\n"
        "        results[category].update((model(x).argmax(1) == y).float().mean())"
    )
    assert _lines(_SCRIPT.format(loop=loop)) == [8]

"""DDP004 and a cache the program fills: loaded where the file exists, else built and saved to
the same path. Preprocessed data (BERT-NER's tokenised features) is built on the CPU, so its
load puts nothing on GPU 0; features a model computed, or data moved to the device first, may
hold CUDA tensors, and their load is reported."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
cached_file = os.path.join(args.data_dir, "cached_train")
if os.path.exists(cached_file) and not args.overwrite_cache:
    features = torch.load(cached_file)
else:
    examples = processor.get_train_examples(args.data_dir)
    {build}
    if args.local_rank in [-1, 0]:
        torch.save(features, cached_file)
"""


@pytest.mark.parametrize(
    ("build", "reported"),
    [
        ("features = convert_examples_to_features(examples, tokenizer, max_len=args.max_seq_length, model_type=args.model_type)", False),
        ("features = [torch.tensor(e.ids) for e in examples]", False),
        ("features = encoder_model(torch.tensor(examples))", True),
        ("features = torch.tensor(examples).to(args.device)", True),
        ("features = torch.tensor(examples).cuda()", True),
    ],
)
def test_a_cache_of_preprocessed_data(build: str, reported: bool) -> None:
    findings = check_source(_SCRIPT.format(build=build), rules=select_rules(["DDP004"])).findings
    assert bool(findings) is reported


def test_a_load_the_program_never_saves_is_reported() -> None:
    source = _SCRIPT.format(build="features = convert(examples)").replace("torch.save(features, cached_file)", "pass")
    assert check_source(source, rules=select_rules(["DDP004"])).findings

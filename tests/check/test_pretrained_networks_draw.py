"""DDP011 on the transformer libraries' networks: BERT, GPT-2 and their kin train with dropout,
so a seed every rank shares repeats their dropout masks on every rank (DialoGPT, ColBERT).
Tokenizers and configs draw nothing. A class the project defines on such a base, re-exported
by its package's ``__init__``, draws too. One seeding block is one finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch
import torch.distributed as dist
{imports}

dist.init_process_group("nccl")
torch.manual_seed(args.seed)
{build}
model = torch.nn.parallel.DistributedDataParallel(model)
"""


def _findings(source: str, path: str = "<string>") -> list[int]:
    return [f.line for f in check_source(source, path, rules=select_rules(["DDP011"])).findings]


@pytest.mark.parametrize(
    ("imports", "build", "report"),
    [
        ("from transformers import BertForSequenceClassification", 'model = BertForSequenceClassification.from_pretrained("bert-base-uncased")', True),
        ("import transformers", 'model = transformers.T5ForConditionalGeneration.from_pretrained("t5-small")', True),
        ("from transformers import GPT2Config, GPT2LMHeadModel", "model = GPT2LMHeadModel(GPT2Config())", True),
        ("from pytorch_pretrained_bert import BertModel", 'model = BertModel.from_pretrained("bert-base-uncased")', True),
        ("from mypackage import ElectraReranker", 'model = ElectraReranker.from_pretrained("electra-base")', True),
        # a tokenizer and a config draw nothing; the model is a plain linear layer
        (
            "from transformers import AutoConfig, AutoTokenizer",
            'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\nconfig = AutoConfig.from_pretrained("bert-base-uncased")\nmodel = torch.nn.Linear(8, 2)',
            False,
        ),
        ("from transformers import BertConfig", 'config = BertConfig.from_pretrained("bert-base-uncased")\nmodel = torch.nn.Linear(8, 2)', False),
        # a LLaMA-style decoder has no dropout; an Auto class may be any architecture
        ("from transformers import LlamaConfig, LlamaForCausalLM", "model = LlamaForCausalLM(LlamaConfig())", False),
        ("from transformers import AutoModelForCausalLM", 'model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B")', False),
    ],
)
def test_a_pretrained_transformer_network_draws_dropout(imports: str, build: str, report: bool) -> None:
    assert bool(_findings(_SCRIPT.format(imports=imports, build=build))) is report


_NETWORKS = """\
import torch.nn as nn
from pytorch_pretrained_bert.modeling_gpt2 import GPT2Model, GPT2PreTrainedModel


class GPT2ModelFP16(GPT2Model):
    def __init__(self, config):
        super().__init__(config)
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)


class LMHeadModel(GPT2PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.transformer = GPT2ModelFP16(config)


class Plain(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.linear = nn.Linear(config.n_embd, 2)
"""


@pytest.mark.parametrize(("name", "report"), [("LMHeadModel", True), ("GPT2ModelFP16", True), ("Plain", False)])
def test_a_network_class_the_package_reexports_draws_through_its_base(tmp_path: Path, name: str, report: bool) -> None:
    package = tmp_path / "lsp_model"
    package.mkdir()
    (package / "networks.py").write_text(_NETWORKS, encoding="utf-8")
    (package / "__init__.py").write_text("from .networks import GPT2ModelFP16, LMHeadModel, Plain\n", encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(imports=f"from lsp_model import {name}", build=f"model = {name}(config)"), encoding="utf-8")
    assert bool(_findings(script.read_text(encoding="utf-8"), str(script))) is report


_BLOCKS = """\
import random

import numpy as np
import torch
import torch.distributed as dist


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    for step in range(10):
        noise = torch.randn(4), np.random.rand(), random.random()


def reseed(seed):
    torch.manual_seed(seed)
    for step in range(10):
        noise = torch.randn(4)


dist.init_process_group("nccl")
"""


def test_one_seeding_block_is_one_finding() -> None:
    """Four seed calls in a row are one problem; another function's seed is another."""
    assert _findings(_BLOCKS) == [9, 18]


_DATASETS = """\
import random

import torch


class Tokenised(torch.utils.data.IterableDataset):
    def __init__(self, data):
        self.data = data

    def __iter__(self):
        yield from self.data


class Cropped(torch.utils.data.Dataset):
    def __getitem__(self, index):
        return random.randint(0, 32)
"""
_LOADER = """\
import torch
import torch.distributed as dist
from data import {name}

dist.init_process_group("nccl")
torch.manual_seed(args.seed)
dataset = {name}(files)
loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=args.workers)
"""


@pytest.mark.parametrize(("name", "report"), [("Tokenised", False), ("Cropped", True), ("Unknown", True)])
def test_loader_workers_count_when_their_dataset_may_draw(tmp_path: Path, name: str, report: bool) -> None:
    """GaLore: the workers of a loader over a project dataset that draws nothing never use the
    seed torch hands them; one over a dataset that draws, or one nobody can read, may."""
    (tmp_path / "data.py").write_text(_DATASETS, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_LOADER.format(name=name), encoding="utf-8")
    assert bool(_findings(script.read_text(encoding="utf-8"), str(script))) is report

"""Issue 21's false-positive and miss classes on unseen DDP code, each with valid and invalid
spellings (several per class, also ones no corpus file uses). ``report`` says whether the rule
must report the snippet; sibling-module cases write a small project under ``tmp_path``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_DDP = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
"""


def _codes(source: str, path: str = "<string>") -> set[str]:
    return {f.code for f in check_source(source, path, rules=select_rules(["DDP"])).findings}


# ------------------------------------------------------------------ single-node designs (DDP006)
_REDUCE_MEAN = (
    _DDP
    + """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
{extra}


def reduce_mean(tensor, nprocs):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    {divide}
    return rt


def main():
    args = parser.parse_args()
    {count}
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(args.local_rank)
    model = DDP(torch.nn.Linear(2, 2).cuda(), device_ids=[args.local_rank])
    loss = model(torch.randn(2, 2).cuda()).sum()
    reduced = reduce_mean(loss, {passed})
    if args.local_rank == 0:
        torch.save(model.module.state_dict(), "model.pt")
"""
)


@pytest.mark.parametrize(
    ("extra", "divide", "count", "passed", "report"),
    [
        ("", "rt /= nprocs", "args.nprocs = torch.cuda.device_count()", "args.nprocs", False),
        ("", "rt = rt / nprocs", "ngpus = torch.cuda.device_count()", "ngpus", False),
        ("", "rt /= nprocs", "world = torch.cuda.device_count()", "nprocs=world", False),
        # a node rank input: the GPU count is per node, the guard is per node
        ('parser.add_argument("--node_rank", type=int, default=0)', "rt /= nprocs", "ngpus = torch.cuda.device_count()", "ngpus", True),
        # the average is over the real world size: nothing says one node
        ("", "rt /= nprocs", "ngpus = dist.get_world_size()", "ngpus", True),
    ],
)
def test_local_gpu_count_as_world_is_single_node(extra: str, divide: str, count: str, passed: str, report: bool) -> None:
    source = _REDUCE_MEAN.format(extra=extra, divide=divide, count=count, passed=passed)
    assert ("DDP006" in _codes(source)) is report


# ------------------------------------------------------------------ the same seed (DDP011)
_SEEDED = (
    _DDP
    + """\
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.manual_seed(1337)
model = torch.nn.Linear(8, 8)
{body}
"""
)


@pytest.mark.parametrize(
    ("body", "report"),
    [
        ("torch.nn.init.normal_(model.weight, mean=0.0, std=0.02)", False),
        ("from torch.nn import init\ninit.xavier_uniform_(model.weight)", False),
        ("g = torch.Generator()\ng.manual_seed(rank)\nfor step in range(3):\n    x = torch.randn(4, generator=g)", False),
        ("for step in range(3):\n    t = torch.multinomial(torch.ones(4), 1, generator=rng)", False),
        # per-rank randomness from the seeded RNG: the same streams on every rank
        ("drop = torch.nn.Dropout(0.1)", True),
        ("for step in range(3):\n    x = torch.randn(4)", True),
        ("loader = torch.utils.data.DataLoader(ds, num_workers=4)", True),
        ("for step in range(3):\n    model.weight.data.normal_()", True),
    ],
)
def test_same_seed_reported_only_with_per_rank_randomness(body: str, report: bool) -> None:
    assert ("DDP011" in _codes(_SEEDED.format(body=body))) is report


# ------------------------------------------------------------------ 'module.' keys as the project's format (DDP007 / DDP008)
_RESUME = (
    _DDP
    + """\


def main(args):
    model = torch.nn.Linear(2, 2)
    if args.distributed:
        if args.gpu is not None:
            model = DDP(model.cuda(args.gpu), device_ids=[args.gpu])
        else:
            model = DDP(model.cuda())
    {otherwise}
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["state_dict"])
    if dist.get_rank() == 0:
        torch.save({{"state_dict": model.state_dict()}}, "checkpoint.pth")
"""
)


@pytest.mark.parametrize(
    ("otherwise", "report"),
    [
        ('else:\n        raise NotImplementedError("Only DistributedDataParallel is supported.")', False),
        (
            'elif args.gpu is not None:\n        model = model.cuda(args.gpu)\n        raise NotImplementedError("DDP only")\n    else:\n        raise RuntimeError("DDP only")',
            False,
        ),
        ('else:\n        sys.exit("needs torchrun")', False),
        # the single-process run keeps the plain model: the keys depend on the launch
        ("else:\n        model = model.cuda()", True),
        ("", True),
    ],
)
def test_resume_through_an_always_present_wrapper(otherwise: str, report: bool) -> None:
    source = "import sys\n" + _RESUME.format(otherwise=otherwise)
    found = _codes(source)
    assert ("DDP007" in found or "DDP008" in found) is report


_SIBLING_RESUME = (
    _DDP
    + """\
from {module} import {helper}

model = DDP(torch.nn.Linear(2, 2).cuda())
{helper}("checkpoint.pth", run_variables={{}}, state_dict=model)
if dist.get_rank() == 0:
    torch.save({{"state_dict": model.state_dict()}}, "checkpoint.pth")
"""
)
_LOADER = """\
import torch


def {helper}(path, run_variables=None, **kwargs):
    checkpoint = torch.load(path, map_location="cpu")
    for key, value in kwargs.items():
        {body}
"""


@pytest.mark.parametrize(
    ("module", "helper", "body", "report"),
    [
        ("utils", "restart_from_checkpoint", "value.load_state_dict(checkpoint[key], strict=False)", False),
        ("src.utils", "continue_training", "value.load_state_dict(checkpoint[key])", False),
        ("tools", "bring_back", "getattr(value, 'load_state_dict')(checkpoint[key])", True),  # no load_state_dict call the analysis sees
        ("utils", "peek", "print(key, checkpoint[key].keys())", True),  # reads, loads nothing back into the wrapper
    ],
)
def test_project_loader_of_any_name_resumes_into_the_wrapper(tmp_path: Path, module: str, helper: str, body: str, report: bool) -> None:
    target = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_LOADER.format(helper=helper, body=body), encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SIBLING_RESUME.format(module=module, helper=helper), encoding="utf-8")
    assert ("DDP007" in _codes(script.read_text(encoding="utf-8"), str(script))) is report


# ------------------------------------------------------------------ seeding helpers of sibling modules (DDP011)
_SIBLING_SEED = (
    _DDP
    + """\
{imports}

dist.init_process_group("nccl")
{call}
loader = torch.utils.data.DataLoader(dataset, num_workers=4, sampler=torch.utils.data.DistributedSampler(dataset))
"""
)


@pytest.mark.parametrize(
    ("module", "helper", "imports", "call", "report"),
    [
        (
            "def fix_random_seeds(seed=31):\n    torch.manual_seed(seed)\n    np.random.seed(seed)",
            "utils",
            "from utils import fix_random_seeds",
            "fix_random_seeds(args.seed)",
            True,
        ),
        (
            "def set_seed(s):\n    random.seed(s)\n    torch.cuda.manual_seed_all(s)",
            "common.misc",
            "import common.misc as misc",
            "misc.set_seed(s=1234)",
            True,
        ),
        (
            "def seed_all(seed):\n    torch.manual_seed(seed + dist.get_rank())",
            "utils",
            "from utils import seed_all",
            "seed_all(args.seed)",
            False,
        ),
        (
            "def seed_all(seed):\n    seed = seed + get_rank()\n    torch.manual_seed(seed)",
            "utils",
            "from utils import seed_all",
            "seed_all(args.seed)",
            False,
        ),
        (
            "def fix_random_seeds(seed):\n    torch.manual_seed(seed)",
            "utils",
            "from utils import fix_random_seeds",
            "fix_random_seeds(args.seed + dist.get_rank())",
            False,
        ),
        ("def log_seed(seed):\n    print(seed)", "utils", "from utils import log_seed", "log_seed(args.seed)", False),
    ],
)
def test_seeding_helper_of_a_sibling_module(tmp_path: Path, module: str, helper: str, imports: str, call: str, report: bool) -> None:
    header = (
        "import random\nimport numpy as np\nimport torch\nimport torch.distributed as dist\nfrom torch.distributed import get_rank\n\n\n"
    )
    target = tmp_path.joinpath(*helper.split(".")).with_suffix(".py")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(header + module + "\n", encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SIBLING_SEED.format(imports=imports, call=call), encoding="utf-8")
    assert ("DDP011" in _codes(script.read_text(encoding="utf-8"), str(script))) is report


# ------------------------------------------------------------------ DataParallel in the run without DDP (DDP024)
@pytest.mark.parametrize(
    ("wrap", "report"),
    [
        (
            "if args.distributed:\n    model = DDP(model.cuda(), device_ids=[gpu])\nelse:\n    model = torch.nn.DataParallel(model.cuda())",
            False,
        ),
        ("if args.multiprocessing_distributed:\n    model = DDP(model)\nelse:\n    model = torch.nn.DataParallel(model).cuda()", False),
        ("if not use_ddp:\n    model = torch.nn.DataParallel(model)\nelse:\n    model = DDP(model)", False),
        (
            "if args.world_size > 1:\n    model = DDP(model)\nelif torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model)",
            False,
        ),
        ("model = DDP(model) if cfg.train.ddp else torch.nn.DataParallel(model)", False),
        # both in the same run
        ("model = DDP(torch.nn.DataParallel(model))", True),
        ("if args.fast:\n    model = torch.nn.DataParallel(model)\nmodel = DDP(model)", True),
        # a rank chooses, not the run: every rank meets DDP
        ("if dist.get_rank() == 0:\n    model = DDP(model)\nelse:\n    model = torch.nn.DataParallel(model)", True),
    ],
)
def test_dataparallel_in_the_branch_without_ddp(wrap: str, report: bool) -> None:
    source = _DDP + 'dist.init_process_group("nccl")\nmodel = torch.nn.Linear(2, 2)\n' + wrap + "\n"
    assert ("DDP024" in _codes(source)) is report


# ------------------------------------------------------------------ training loops through project code (DDP014)
_TRAINER = """\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train(self):
        self.model.train()
        return self

    def do_pass(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self._update(loss)
        return loss

    def _update(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def score(self, x, y):
        return torch.nn.functional.mse_loss(self.model(x), y)


def train_one_epoch(model, optimizer, x, y):
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def evaluate_batch(model, x, y):
    return torch.nn.functional.mse_loss(model(x), y)
"""
_LOOP = (
    _DDP
    + """\
{imports}
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(2, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
{make}
loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
total_loss = 0.0
for x, y in loader:
    total_loss += {step}.item()
print(total_loss)
"""
)


@pytest.mark.parametrize(
    ("imports", "make", "step", "report"),
    [
        ("from engine.trainer import Trainer", "trainer = Trainer(model, optimizer).train()", "trainer.do_pass(x, y)", False),
        ("import engine.trainer as T", "trainer = T.Trainer(model, optimizer)", "trainer.do_pass(x, y)", False),
        ("from engine import trainer", "", "trainer.train_one_epoch(model, optimizer, x, y)", False),
        ("from engine.trainer import train_one_epoch", "", "train_one_epoch(model, optimizer, x, y)", False),
        # evaluation through the project's code: the shard's own score
        ("from engine.trainer import Trainer", "trainer = Trainer(model, optimizer)", "trainer.score(x, y)", True),
        ("from engine.trainer import evaluate_batch", "", "evaluate_batch(model, x, y)", True),
    ],
)
def test_training_loop_through_project_code(tmp_path: Path, imports: str, make: str, step: str, report: bool) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "engine" / "trainer.py").write_text(_TRAINER, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_LOOP.format(imports=imports, make=make, step=step), encoding="utf-8")
    assert ("DDP014" in _codes(script.read_text(encoding="utf-8"), str(script))) is report


# ------------------------------------------------------------------ objects made on rank 0 only, tested for None (DDP005 / DDP012)
_OPTIONAL = (
    _DDP
    + """\
from torch.utils.tensorboard import SummaryWriter


class Logger:
    def __init__(self, path):
        self.path = path


class Trainer:
    def __init__(self, model, logger=None):
        self.model = model
        self.logger = logger

    def step(self, it):
        if {guard}:
            self.save(it)

    def save(self, it):
        torch.save(self.model.state_dict(), f"model_{{it}}.pt")


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    model = torch.nn.Linear(2, 2)
{make}
    trainer.step(1)
"""
)
_TRAINER_ON_RANK0 = """\
    if rank == 0:
        logger = Logger("runs")
        trainer = Trainer(model, logger=logger)
    else:
        trainer = Trainer(model)"""


@pytest.mark.parametrize(
    ("guard", "make", "report"),
    [
        ("self.logger is not None", _TRAINER_ON_RANK0, False),
        ("self.logger", _TRAINER_ON_RANK0, False),
        ("not self.logger is None", _TRAINER_ON_RANK0, False),
        ("self.logger is not None", "    trainer = Trainer(model, Logger('runs') if dist.get_rank() == 0 else None)", False),
        (
            "self.logger is not None",
            "    logger = None\n    if rank == 0:\n        logger = Logger('runs')\n    trainer = Trainer(model, logger)",
            False,
        ),
        # the logger exists on every rank: the guard is no rank test
        ("self.logger is not None", "    trainer = Trainer(model, logger=Logger('runs'))", True),
        ("self.logger is not None", "    trainer = Trainer(model, Logger('runs'))", True),
        # a None-test of an object every rank has, or none has a reason to skip
        ("self.model is not None", _TRAINER_ON_RANK0, True),
    ],
)
def test_rank0_only_object_tested_for_none(guard: str, make: str, report: bool) -> None:
    assert ("DDP005" in _codes(_OPTIONAL.format(guard=guard, make=make))) is report


@pytest.mark.parametrize(
    ("made", "test", "report"),
    [
        ('writer = SummaryWriter("runs") if rank == 0 else None', "if writer:", False),
        ('writer = SummaryWriter("runs") if rank == 0 else None', "if writer is not None:", False),
        ('writer = None\nif is_main:\n    writer = SummaryWriter("runs")', "if writer is not None:", False),
        ('writer = None\nif rank == 0:\n    writer = SummaryWriter("runs")', "if writer is None:\n    pass\nelse:", False),
        ('writer = SummaryWriter("runs")', "if writer is not None:", True),
        ('writer = SummaryWriter("runs") if use_tb else None', "if writer:", True),
    ],
)
def test_rank0_only_writer_guard(made: str, test: str, report: bool) -> None:
    source = _DDP + 'dist.init_process_group("nccl")\nrank = dist.get_rank()\nis_main = rank == 0\n'
    source += "from torch.utils.tensorboard import SummaryWriter\n" + made + "\n" + test + '\n    print("step 1")\n'
    assert ("DDP012" in _codes(source)) is report


# ------------------------------------------------------------------ code that never runs in a worker (DDP012)
_TOP_LEVEL_DDP = (
    _DDP
    + """\
import os


class GPT(torch.nn.Module):
    {decorator}
    def {name}({params}):
        print("loading weights")
        return None


def report_weights():
    print("weights")


{setup}
model = DDP(GPT().cuda())
{calls}
"""
)
_AT_IMPORT = 'ddp = int(os.environ.get("RANK", -1)) != -1\nif ddp:\n    dist.init_process_group(backend="nccl")'
_GUARDED = 'if __name__ == "__main__":\n    dist.init_process_group(backend="nccl")'


@pytest.mark.parametrize(
    ("decorator", "name", "params", "setup", "calls", "report"),
    [
        ("@classmethod", "from_pretrained", "cls, model_type", _AT_IMPORT, "# model = GPT.from_pretrained('gpt2')", False),
        ("@staticmethod", "load_hf", "model_type", _AT_IMPORT, "", False),
        # called, handed over, or importable by the project: it may run
        ("@classmethod", "from_pretrained", "cls, model_type", _AT_IMPORT, "model = GPT.from_pretrained('gpt2')", True),
        ("@classmethod", "from_pretrained", "cls, model_type", _AT_IMPORT, "factory = GPT.from_pretrained", True),
        ("@classmethod", "from_pretrained", "cls, model_type", _GUARDED, "", True),
        # an instance method may be a hook the framework calls
        ("", "on_load", "self", _AT_IMPORT, "", True),
    ],
)
def test_never_called_function_never_runs(decorator: str, name: str, params: str, setup: str, calls: str, report: bool) -> None:
    source = _TOP_LEVEL_DDP.format(decorator=decorator, name=name, params=params, setup=setup, calls=calls)
    found = check_source(source, rules=select_rules(["DDP012"])).findings
    assert any(f.line == 11 for f in found) is report
    assert any(f.line == 16 for f in found) is (setup != _AT_IMPORT)  # report_weights: never called


# ------------------------------------------------------------------ loggers of sibling modules that print on every rank (DDP012)
_LOGGER_MODULE = """\
import logging
import os


def create_logger(filepath, rank):
    logger = logging.getLogger()
    logger.handlers = []
{body}
    return logger


def initialize_exp(params, *columns):
    logger = create_logger(os.path.join(params.dump_path, "train.log"), rank=params.rank)
    stats = {{}}
    return logger, stats
"""
_USES_LOGGER = (
    _DDP
    + """\
from {module} import {helper}


def main(args):
    dist.init_process_group("nccl")
    {bind} = {helper}(args{extra})
    {guard}logger.info("building data done")
"""
)
_CONSOLE = "    handler = logging.StreamHandler()\n    logger.addHandler(handler)"


@pytest.mark.parametrize(
    ("body", "helper", "bind", "guard", "report"),
    [
        (_CONSOLE, "initialize_exp", "logger, training_stats", "", True),
        (_CONSOLE, "create_logger", "logger", "", True),
        (
            "    logger.addHandler(logging.StreamHandler())\n    logger.addHandler(logging.FileHandler(filepath))",
            "create_logger",
            "logger",
            "",
            True,
        ),
        # the console handler or the level on rank 0 only: a rank-0 logger
        ("    if rank == 0:\n        logger.addHandler(logging.StreamHandler())", "create_logger", "logger", "", False),
        (
            _CONSOLE + "\n    logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)",
            "initialize_exp",
            "logger, training_stats",
            "",
            False,
        ),
        ("    logger.addHandler(logging.FileHandler(filepath))", "create_logger", "logger", "", False),
        # guarded by the caller
        (_CONSOLE, "initialize_exp", "logger, training_stats", "if dist.get_rank() == 0:\n        ", False),
        # the tuple's other element
        (_CONSOLE, "initialize_exp", "training_stats, logger", "", False),
    ],
)
def test_logger_from_sibling_module(tmp_path: Path, body: str, helper: str, bind: str, guard: str, report: bool) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "logger.py").write_text(_LOGGER_MODULE.format(body=body), encoding="utf-8")
    extra = ", 0" if helper == "create_logger" else ""
    script = tmp_path / "train.py"
    script.write_text(_USES_LOGGER.format(module="src.logger", helper=helper, bind=bind, guard=guard, extra=extra), encoding="utf-8")
    found = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP012"])).findings
    assert bool(found) is report


@pytest.mark.parametrize(
    ("inside", "report"),
    [
        ("", True),  # TorchSeg's engine: the module's logger, read in a method
        ("        logger = logging.getLogger('quiet')\n", False),  # the function binds its own
        ("        if dist.get_rank() != 0:\n            return\n", False),
    ],
)
def test_a_module_level_logger_from_a_sibling_module(tmp_path: Path, inside: str, report: bool) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "logger.py").write_text(_LOGGER_MODULE.format(body=_CONSOLE), encoding="utf-8")
    script = tmp_path / "engine.py"
    script.write_text(
        _DDP
        + "import logging\nfrom src.logger import create_logger\n\nlogger = create_logger('train.log', 0)\n\n\n"
        + "class Engine:\n    def __init__(self):\n        dist.init_process_group('nccl')\n"
        + inside
        + "        logger.info('PyTorch Version %s', torch.__version__)\n",
        encoding="utf-8",
    )
    found = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP012"])).findings
    assert bool(found) is report


# ------------------------------------------------------------------ endless passes over a sharded loader (DDP001)
_SAMPLER_HELPER = """\
from torch.utils import data


def data_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
    return data.RandomSampler(dataset) if shuffle else data.SequentialSampler(dataset)
"""
_ENDLESS = (
    _DDP
    + """\
from torch.utils.data import DataLoader, DistributedSampler
{imports}


def sample_data(loader):
{loop}


def train(args, loader):
    loader = sample_data(loader)
    for step in range(args.iters):
        batch = next(loader)


def main(args):
    dist.init_process_group("nccl")
    loader = DataLoader(dataset, batch_size=8, sampler={sampler})
    train(args, loader)
"""
)
_FOREVER = "    while True:\n        for batch in loader:\n            yield batch"
_WITH_EPOCHS = "    epoch = 0\n    while True:\n        loader.sampler.set_epoch(epoch)\n        epoch += 1\n        for batch in loader:\n            yield batch"


@pytest.mark.parametrize(
    ("imports", "loop", "sampler", "report"),
    [
        ("", _FOREVER, "DistributedSampler(dataset)", True),
        (
            "",
            "    step = 0\n    while step < 10**9:\n        for batch in loader:\n            step += 1\n            yield batch",
            "DistributedSampler(dataset)",
            True,
        ),
        ("from distributed import data_sampler", _FOREVER, "data_sampler(dataset, shuffle=True, distributed=args.distributed)", True),
        ("", _WITH_EPOCHS, "DistributedSampler(dataset)", False),
        ("", _FOREVER, "None", False),
        ("from distributed import data_sampler", _FOREVER, "torch.utils.data.RandomSampler(dataset)", False),
    ],
)
def test_endless_passes_over_a_sharded_loader(tmp_path: Path, imports: str, loop: str, sampler: str, report: bool) -> None:
    (tmp_path / "distributed.py").write_text(_SAMPLER_HELPER, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_ENDLESS.format(imports=imports, loop=loop, sampler=sampler), encoding="utf-8")
    assert ("DDP001" in _codes(script.read_text(encoding="utf-8"), str(script))) is report


# ------------------------------------------------------------------ DataLoader worker seeds (DDP011)
@pytest.mark.parametrize(
    ("seed", "passed", "report"),
    [
        ("args.seed + worker_id", True, True),  # worker k of every rank: the same stream
        ("torch.initial_seed() % 2**32", True, False),  # follows the rank's own RNG
        ("args.seed + worker_id + 100 * dist.get_rank()", True, False),
        ("args.seed + worker_id", False, False),  # never handed to a loader: never runs
    ],
)
def test_worker_init_seed(seed: str, passed: bool, report: bool) -> None:
    source = _DDP + "import random\n\n\ndef worker_init_fn(worker_id):\n    random.seed(" + seed + ")\n\n\n"
    source += 'dist.init_process_group("nccl")\n'
    extra = ", worker_init_fn=worker_init_fn" if passed else ""
    source += f"loader = torch.utils.data.DataLoader(ds, num_workers=4, sampler=torch.utils.data.DistributedSampler(ds){extra})\n"
    assert ("DDP011" in _codes(source)) is report


@pytest.mark.parametrize(
    ("init", "report"),
    [
        ("", True),  # workers seeded from the main RNG, the same on every rank
        (", worker_init_fn=partial(seed_worker, rank=rank, seed=11)", False),  # yolov4: reseeded with the rank
        (", worker_init_fn=lambda worker: seed_worker(worker, dist.get_rank(), 11)", False),  # the rank read in the lambda
        (", worker_init_fn=partial(seed_worker, seed=11)", True),
    ],
)
def test_loader_workers_reseeded_with_the_rank_consume_no_shared_seed(init: str, report: bool) -> None:
    source = _DDP + "import os\nfrom functools import partial\nfrom utils import seed_worker\n\n"
    source += 'dist.init_process_group("nccl")\nrank = int(os.environ["RANK"])\ntorch.manual_seed(11)\n'
    source += f"loader = torch.utils.data.DataLoader(ds, num_workers=4, sampler=torch.utils.data.DistributedSampler(ds){init})\n"
    assert ("DDP011" in _codes(source)) is report


_AUGMENTING_DATASET = """\
import random
import numpy as np
import torch
from torch.utils.data import Dataset


class YoloDataset(Dataset):
    def __getitem__(self, index):
        flip = random.random() < 0.5
        return torch.from_numpy(np.random.rand(3, 8, 8)), flip

    def __len__(self):
        return 64


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def worker_init_fn(worker_id, rank, seed):
    random.seed(rank + seed + worker_id)
    np.random.seed(rank + seed + worker_id)
    torch.manual_seed(rank + seed + worker_id)
"""


@pytest.mark.parametrize(
    ("init", "extra", "report"),
    [
        # yolov4: the augmentation runs in workers reseeded with the rank
        (", worker_init_fn=partial(worker_init_fn, rank=rank, seed=11)", "", False),
        ("", "", True),  # workers seeded from the shared seed
        # the dataset also draws in the main process
        (", worker_init_fn=partial(worker_init_fn, rank=rank, seed=11)", "sample = dataset[0]\n", True),
    ],
)
def test_dataset_draws_in_workers_reseeded_with_the_rank(tmp_path: Path, init: str, extra: str, report: bool) -> None:
    (tmp_path / "utils.py").write_text(_AUGMENTING_DATASET, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(
        _DDP
        + "import os\nfrom functools import partial\nfrom utils import YoloDataset, seed_everything, worker_init_fn\n\n"
        + 'dist.init_process_group("nccl")\nrank = int(os.environ["RANK"])\nseed_everything(11)\n'
        + "dataset = YoloDataset()\nsampler = torch.utils.data.DistributedSampler(dataset)\n"
        + f"loader = torch.utils.data.DataLoader(dataset, batch_size=8, num_workers=4, sampler=sampler{init})\n"
        + extra
        + "for epoch in range(2):\n    for x, flip in loader:\n        model(x).sum().backward()\n",
        encoding="utf-8",
    )
    assert ("DDP011" in _codes(script.read_text(encoding="utf-8"), str(script))) is report


# ------------------------------------------------------------------ loads of files this program saved from the CPU (DDP004)
@pytest.mark.parametrize(
    ("saved", "report"),
    [
        ("train_features.cpu()", False),
        ('{"features": feats.cpu(), "labels": labels.cpu(), "k": 20}', False),
        ("[f.cpu() for f in feats]", True),  # a comprehension: not read as CPU values
        ("host", False),
        ("feats.to('cpu')", False),
        ("feats", True),  # a CUDA tensor as it is
        ('{"features": feats.cpu(), "labels": labels}', True),
    ],
)
def test_load_of_a_file_saved_from_cpu(saved: str, report: bool) -> None:
    source = _DDP + 'dist.init_process_group("nccl")\nfeats = model(x).cuda()\nlabels = y.cuda()\nhost = feats.cpu().numpy()\n'
    source += "path = os.path.join(args.dump, 'feats.pth')\nif dist.get_rank() == 0:\n"
    source += f"    torch.save({saved}, path)\ndist.barrier()\nloaded = torch.load(path)\n"
    assert ("DDP004" in _codes("import os\n" + source)) is report


# ------------------------------------------------------------------ collectives inside project helpers under a rank test (DDP027)
_DIST_UTILS = """\
import torch.distributed as dist


def reduce_mean(tensor, nprocs):
    rt = tensor.clone()
    dist.all_reduce(rt)
    return rt / nprocs


def synchronize():
    if dist.get_world_size() == 1:
        return
    dist.barrier()


def save_on_master(state, path):
    if dist.get_rank() == 0:
        torch.save(state, path)


def log_mean(value):
    return reduce_mean(value, 2)
"""


@pytest.mark.parametrize(
    ("imports", "call", "report"),
    [
        ("from utils.dist import reduce_mean", "reduce_mean(loss, 2)", True),
        ("import utils.dist as du", "du.log_mean(loss)", True),  # through a helper of the helper
        ("from utils import dist as du", "du.synchronize()", True),  # world-size test: every rank alike
        ("from utils.dist import save_on_master", "save_on_master({}, 'x.pt')", False),  # its collective-free body
    ],
)
def test_collective_of_a_project_helper_under_a_rank_test(tmp_path: Path, imports: str, call: str, report: bool) -> None:
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "utils" / "dist.py").write_text("import torch\n" + _DIST_UTILS, encoding="utf-8")
    script = tmp_path / "train.py"
    body = _DDP + imports + '\n\ndist.init_process_group("nccl")\nloss = torch.ones(1)\n'
    script.write_text(body + f"if dist.get_rank() == 0:\n    {call}\n{call}\n", encoding="utf-8")
    found = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP027"])).findings
    assert any(f.line == script.read_text(encoding="utf-8").count("\n") - 1 for f in found) is report
    assert not any(f.line == script.read_text(encoding="utf-8").count("\n") for f in found)  # the unguarded call


_TRAINER_MODULE = """\
import torch


class Trainer:
    def __init__(self, model, logger=None, local_rank=0):
        self.model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[local_rank])
        self.logger = logger

    def do_pass(self, it):
        if it % 1000 == 0 and self.logger is not None:
            self.save_network(it)

    def save_network(self, it):
        torch.save(self.model.module.state_dict(), f"network_{it}.pth")
        print(f"Network saved at {it}.")
"""


@pytest.mark.parametrize(
    ("make", "report"),
    [
        ("if local_rank == 0:\n    logger = Logger()\n    model = Trainer(net, logger=logger)\nelse:\n    model = Trainer(net)", False),
        ("model = Trainer(net, Logger() if dist.get_rank() == 0 else None)", False),
        ("model = Trainer(net, logger=Logger())", True),  # a logger on every rank
        ("model = Trainer(net, logger=make_logger())", True),
    ],
)
def test_rank0_logger_handed_in_by_the_importing_script(tmp_path: Path, make: str, report: bool) -> None:
    """The trainer's module is checked; the script that imports it decides where its logger exists."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "__init__.py").write_text("", encoding="utf-8")
    trainer = tmp_path / "model" / "trainer.py"
    trainer.write_text(_TRAINER_MODULE, encoding="utf-8")
    script = _DDP + "from model.trainer import Trainer\n\n\nclass Logger:\n    pass\n\n\ndist.init_process_group('nccl')\n"
    script += "local_rank = int(os.environ['LOCAL_RANK'])\nnet = torch.nn.Linear(2, 2)\n" + make + "\nmodel.do_pass(1000)\n"
    (tmp_path / "train.py").write_text("import os\n" + script, encoding="utf-8")
    found = _codes(trainer.read_text(encoding="utf-8"), str(trainer))
    assert ("DDP005" in found) is report
    assert ("DDP012" in found) is report


# ------------------------------------------------------------------ set_epoch for the loader the loop reads (DDP001)
_LOADER_HELPER = """\
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, SequentialSampler


def get_loaders(args, train_set, test_set):
    train_sampler = RandomSampler(train_set) if args.local_rank == -1 else DistributedSampler(train_set)
    train_loader = DataLoader(train_set, sampler=train_sampler, batch_size=args.batch_size)
    test_loader = DataLoader(test_set, sampler=SequentialSampler(test_set), batch_size=args.batch_size)
    return train_loader, test_loader
"""
_HELPER_LOADER_LOOPS = (
    _DDP
    + """\
from tqdm import tqdm

from data_utils import get_loaders


def train(args, model, optimizer):
    {target} = get_loaders(args, None, None)
{loop}
"""
)
_WHILE_TQDM = """\
    step = 0
    while True:
        batches = tqdm(train_loader, disable=args.local_rank not in [-1, 0])
        {set_epoch}
        for i, batch in enumerate(batches):
            model(batch).sum().backward()
            step += 1
        if step > args.steps:
            break"""
_FOR_EPOCHS = """\
    for epoch in range(args.epochs):
        {set_epoch}
        for batch in train_loader:
            model(batch).sum().backward()"""


@pytest.mark.parametrize(
    ("target", "loop", "set_epoch", "report"),
    [
        ("train_loader, test_loader", _WHILE_TQDM, "", True),  # the helper's sampler, an endless epoch loop
        ("train_loader, test_loader", _WHILE_TQDM, "train_loader.sampler.set_epoch(step)", False),
        ("train_loader, test_loader", _FOR_EPOCHS, "", True),
        ("train_loader, test_loader", _FOR_EPOCHS, "train_loader.sampler.set_epoch(epoch)", False),
        ("test_loader, train_loader", _FOR_EPOCHS, "", False),  # the names swapped: the loop reads the sequential one
        ("train_loader", _FOR_EPOCHS, "", False),  # the whole tuple, never iterated as a loader
    ],
)
def test_set_epoch_for_a_loader_a_project_helper_builds(tmp_path: Path, target: str, loop: str, set_epoch: str, report: bool) -> None:
    (tmp_path / "data_utils.py").write_text(_LOADER_HELPER, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_HELPER_LOADER_LOOPS.format(target=target, loop=loop.format(set_epoch=set_epoch or "pass")), encoding="utf-8")
    assert ("DDP001" in _codes(script.read_text(encoding="utf-8"), str(script))) is report


_TWO_SAMPLERS = (
    _DDP
    + """\
from torch.utils.data import DataLoader, DistributedSampler


class Trainer:
    def __init__(self, rank, world_size, args):
        self.args = args
        self.lr_sampler = DistributedSampler(lr_set, rank=rank, num_replicas=world_size)
        self.lr_loader = DataLoader(lr_set, batch_size=4, sampler=self.lr_sampler)
        self.hr_sampler = DistributedSampler(hr_set, rank=rank, num_replicas=world_size)
        self.hr_loader = DataLoader(hr_set, batch_size=4, sampler=self.hr_sampler)

    def train(self):
        for epoch in range(self.args.epochs):
            {set_epoch}
            for batch in self.lr_loader:
                self.step(batch)
                self.step(self.next_hr())

    def next_hr(self):
        try:
            return next(self.hr_iter)
        except (AttributeError, StopIteration):
            {next_hr}
            self.hr_iter = iter(self.hr_loader)
            return next(self.hr_iter)
"""
)


@pytest.mark.parametrize(
    ("set_epoch", "next_hr", "report"),
    [
        ("pass", "self.hr_sampler.set_epoch(self.hr_sampler.epoch + 1)", True),  # only the other loader's sampler advances
        ("pass", "self.hr_loader.sampler.set_epoch(self.hr_epochs)", True),
        ("self.lr_sampler.set_epoch(epoch)", "self.hr_sampler.set_epoch(self.hr_sampler.epoch + 1)", False),
        ("self.lr_loader.sampler.set_epoch(epoch)", "self.hr_sampler.set_epoch(self.hr_sampler.epoch + 1)", False),
        ("self.lr_loader.sampler.set_epoch(epoch)", "pass", True),  # the loop restarts hr_loader too, never advanced
        ("pass", "sampler.set_epoch(epoch)", False),  # a receiver this file does not know: it may be the loop's
    ],
)
def test_set_epoch_of_another_loader_does_not_count(set_epoch: str, next_hr: str, report: bool) -> None:
    assert ("DDP001" in _codes(_TWO_SAMPLERS.format(set_epoch=set_epoch, next_hr=next_hr))) is report


_CYCLE = (
    _DDP
    + """\
from torch.utils.data import DataLoader, DistributedSampler


def cycle(iterable):
{body}


class Trainer:
    def set_data_src(self, dataset, is_ddp, rank, world_size):
        sampler = {sampler}
        dataloader = DataLoader(dataset, batch_size=8, sampler=sampler, shuffle=not is_ddp, drop_last=True)
        self.loader = cycle(dataloader)

    def train(self):
        self.model(next(self.loader)).sum().backward()
"""
)
_CYCLE_FOREVER = "    while True:\n        for item in iterable:\n            yield item"
_CYCLE_COUNTED = "    passes = 0\n    while True:\n        iterable.sampler.set_epoch(passes)\n        passes += 1\n        for item in iterable:\n            yield item"


@pytest.mark.parametrize(
    ("body", "sampler", "report"),
    [
        (_CYCLE_FOREVER, "DistributedSampler(dataset, rank=rank, num_replicas=world_size) if is_ddp else None", True),
        (_CYCLE_FOREVER, "None if not is_ddp else DistributedSampler(dataset)", True),
        (_CYCLE_FOREVER, "torch.utils.data.RandomSampler(dataset) if is_ddp else None", False),
        (_CYCLE_COUNTED, "DistributedSampler(dataset) if is_ddp else None", False),
    ],
)
def test_a_sampler_chosen_by_a_conditional_expression(body: str, sampler: str, report: bool) -> None:
    assert ("DDP001" in _codes(_CYCLE.format(body=body, sampler=sampler))) is report


# ------------------------------------------------------------------ randomness drawn in the project's modules (DDP011)
_SEED_HELPERS = """\
import random

import numpy as np
import torch
import torch.distributed as dist


def set_seed(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)


def set_seed_per_rank(args):
    torch.manual_seed(args.seed + dist.get_rank())
"""
_MODELS = """\
import torch
import torch.nn as nn


class Noisy(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.fc(x))


class Plain(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)


class LatentTrainer:
    def __init__(self, dim):
        self.model = Plain(dim)

    def step(self):
        return self.model(sample_latents(4))


def sample_latents(n):
    return torch.randn(n, 8)


def jitter(x):
    return x + np.random.rand()
"""
_SEEDED_SCRIPT = (
    _DDP
    + """\
import os

import numpy as np
{imports}


def worker(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    {seed}
    {body}


if __name__ == "__main__":
    worker(args)
"""
)


@pytest.mark.parametrize(
    ("imports", "seed", "body", "report"),
    [
        # a seeding helper of the project seeding with an attribute of its argument, dropout in a model class there
        ("from utils import set_seed\nfrom models import Noisy", "set_seed(args)", "model = DDP(Noisy(8))", True),
        ("from utils import set_seed\nfrom models import Plain", "set_seed(args)", "model = DDP(Plain(8))", False),
        ("from utils import set_seed_per_rank\nfrom models import Noisy", "set_seed_per_rank(args)", "model = DDP(Noisy(8))", False),
        # this file's helper, the dropout in the project's model
        (
            "import models\n\n\ndef set_local_seed(args):\n    torch.manual_seed(args.seed)",
            "set_local_seed(args)",
            "model = DDP(models.Noisy(8))",
            True,
        ),
        (
            "import models\n\n\ndef set_local_seed(args):\n    torch.manual_seed(args.seed)",
            "set_local_seed(args)",
            "model = DDP(models.Plain(8))",
            False,
        ),
        # a seed call here, the draws in a project class's methods or a project function
        ("from models import LatentTrainer", "torch.manual_seed(args.seed)", "trainer = LatentTrainer(8)\n    trainer.step()", True),
        ("from models import jitter", "np.random.seed(args.seed)", "x = jitter(torch.ones(2))", True),
        ("from models import jitter", "torch.manual_seed(args.seed)", "x = jitter(torch.ones(2))", False),
        ("from models import Noisy", "torch.manual_seed(args.seed + dist.get_rank())", "model = DDP(Noisy(8))", False),
    ],
)
def test_randomness_drawn_in_the_project_modules(tmp_path: Path, imports: str, seed: str, body: str, report: bool) -> None:
    (tmp_path / "utils.py").write_text(_SEED_HELPERS, encoding="utf-8")
    (tmp_path / "models.py").write_text(_MODELS.replace("import torch\n", "import numpy as np\nimport torch\n", 1), encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SEEDED_SCRIPT.format(imports=imports, seed=seed, body=body), encoding="utf-8")
    assert ("DDP011" in _codes(script.read_text(encoding="utf-8"), str(script))) is report


# ------------------------------------------------------------------ the function that spawns runs in the parent (DDP012)
_FIRE_SPAWN = (
    _DDP
    + """\
import fire
from tqdm import tqdm


def run_training(rank, world_size, data):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    {worker}


def train_from_folder(data="./data", generate=False, multi_gpus=False):
    if generate:
        for num in tqdm(range(4)):
            pass
        print("sample images generated")
        return
    world_size = torch.cuda.device_count()
    if world_size == 1 or not multi_gpus:
        run_training(0, 1, data)
        return
    mp.spawn(run_training, args=(world_size, data), nprocs=world_size, join=True)


def main():
    {entry}
"""
)


@pytest.mark.parametrize(
    ("worker", "entry", "report"),
    [
        ("pass", "fire.Fire(train_from_folder)", False),  # the spawner's own prints run once, in the parent
        ("pass", "train_from_folder()", False),
        ('print(f"{rank + 1}/{world_size} process initialized.")', "fire.Fire(train_from_folder)", False),  # tagged per rank
        ('print("process initialized.")', "fire.Fire(train_from_folder)", True),  # a worker's: once per rank
    ],
)
def test_the_function_that_spawns_runs_in_the_parent(worker: str, entry: str, report: bool) -> None:
    assert ("DDP012" in _codes(_FIRE_SPAWN.format(worker=worker, entry=entry))) is report


# ------------------------------------------------------------------ a function nested in a method, called under a rank test
_NESTED = (
    _DDP
    + """\


class Trainer:
    def __init__(self, args, device):
        self.main_process = args.rank in [-1, 0]
        self.model = DDP(torch.nn.Linear(2, 2).to(device))

    def calibrate(self):
        def save_calib_model():
            print("saving the calibrated model")
            torch.save({{"model": self.model.module.state_dict()}}, "calib.pt")

        {call}
"""
)


@pytest.mark.parametrize(
    ("call", "report"),
    [
        ("if self.main_process:\n            save_calib_model()", False),  # called by its name, behind the rank test
        ("save_calib_model()", True),
    ],
)
def test_a_function_nested_in_a_method_is_called_by_its_name(call: str, report: bool) -> None:
    found = _codes(_NESTED.format(call=call))
    assert ("DDP005" in found) is report and ("DDP012" in found) is report


# ------------------------------------------------------------------ --local_rank declared in a helper module (DDP016)
_GPU_HELPERS = """\
import argparse
import os


def add_gpu_params(parser):
    parser.add_argument("--local_rank", default=0, type=int)


def add_torchrun_params(parser):
    parser.add_argument("--local_rank", "--local-rank", type=int, default=os.environ.get("LOCAL_RANK", 0))


class Options:
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.initialize()

    def initialize(self):
        self.parser.add_argument("--local_rank", type=int, default=-1)


def get_args():
    parser = argparse.ArgumentParser()
    add_gpu_params(parser)
    return parser


def merge_config():
    return get_args().parse_args(), {}


def torchrun_config():
    parser = argparse.ArgumentParser()
    add_torchrun_params(parser)
    return parser.parse_args(), {}
"""


@pytest.mark.parametrize(
    ("call", "read", "report"),
    [
        ("gpu.add_gpu_params(parser)", "args.local_rank", True),
        ("gpu.Options()", "args.local_rank", True),  # declared in a method of a class
        ("gpu.add_torchrun_params(parser)", "args.local_rank", False),  # both spellings, LOCAL_RANK by default
        ("gpu.add_gpu_params(parser)", 'int(os.environ["LOCAL_RANK"])', False),  # this file never reads the option
        ("args, cfg = gpu.merge_config()", "args.local_rank", True),  # declared two calls down
        ("args, cfg = gpu.torchrun_config()", "args.local_rank", False),
    ],
)
def test_local_rank_declared_in_a_helper_module(tmp_path: Path, call: str, read: str, report: bool) -> None:
    (tmp_path / "gpu.py").write_text(_GPU_HELPERS, encoding="utf-8")
    script = tmp_path / "train.py"
    text = _DDP + f"import argparse\nimport os\n\nimport gpu\n\nparser = argparse.ArgumentParser()\n{call}\nargs = parser.parse_args()\n"
    text += f'dist.init_process_group("nccl")\ntorch.cuda.set_device({read})\n'
    script.write_text(text, encoding="utf-8")
    assert ("DDP016" in _codes(text, str(script))) is report


# ------------------------------------------------------------------ a rank read from an options dict (DDP005, DDP012)
_OPTIONS_DICT = (
    _DDP
    + """\


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.net = DDP(torch.nn.Linear(2, 2))

    def save_network(self, path):
        {test}
        torch.save(self.net.module.state_dict(), path)
        print("saved", path)
"""
)


@pytest.mark.parametrize(
    ("test", "report"),
    [
        ('if self.opt["global_rank"] != 0:\n            return', False),  # an early return on the rank's name as a key
        ("if self.opt['local_rank'] > 0:\n            return", False),
        ('if config["rank"] != 0:\n            return', False),
        ('if self.opt["phase"] != "train":\n            return', True),  # a key that names no rank
    ],
)
def test_a_rank_read_from_an_options_dict(test: str, report: bool) -> None:
    found = _codes(_OPTIONS_DICT.format(test=test))
    assert ("DDP005" in found) is report and ("DDP012" in found) is report


# ------------------------------------------------------------------ seeds of project helpers (DDP034)
_SEEDING_HELPERS = """\
import random

import numpy as np
import torch


def device_setup(opts):
    random_seed = getattr(opts, "common.seed", 0)
    random.seed(random_seed)
    torch.manual_seed(random_seed)
    np.random.seed(random_seed)
    return opts


def fix_seeds(args):
    torch.manual_seed(args.seed)
"""


@pytest.mark.parametrize(
    ("parent", "worker", "report"),
    [
        ("opts = device_setup(opts)", "pass", True),  # ml-cvnets: seeded in the parent only
        ("fix_seeds(opts)", "pass", True),
        ("opts = device_setup(opts)", "device_setup(opts)", False),  # the worker seeds too
        ("pass", "fix_seeds(opts)", False),
    ],
)
def test_a_project_helper_that_seeds_in_the_spawning_process(tmp_path: Path, parent: str, worker: str, report: bool) -> None:
    (tmp_path / "common_utils.py").write_text(_SEEDING_HELPERS)
    script = tmp_path / "main_train.py"
    script.write_text(
        _DDP
        + "from common_utils import device_setup, fix_seeds\n\n\n"
        + f"def distributed_worker(i, opts):\n    {worker}\n    dist.init_process_group('nccl', rank=i)\n\n\n"
        + f"def main_worker(opts):\n    {parent}\n    mp.spawn(fn=distributed_worker, args=(opts,), nprocs=2)\n"
    )
    assert ("DDP034" in _codes(script.read_text(), str(script))) is report


# ------------------------------------------------------------------ prints about a rank's own mishap (DDP012)
@pytest.mark.parametrize(
    ("body", "report"),
    [
        ('if torch.isnan(loss).any():\n        print(f"NaN at {it}, skipping")\n        continue', False),
        ("if not torch.isfinite(loss):\n        print('skipped')\n        continue", False),
        ("if torch.isnan(loss).any():\n        continue\n    print('no NaN here')", True),  # after the branch: every rank
        ("try:\n        loss.backward()\n    except RuntimeError as error:\n        print(error)\n        raise", False),
    ],
)
def test_a_print_about_the_ranks_own_mishap_is_no_duplicate(body: str, report: bool) -> None:
    source = _DDP + (
        "from torch.utils.data import DataLoader, DistributedSampler\n\ndist.init_process_group('nccl')\n"
        "loader = DataLoader(dataset, sampler=DistributedSampler(dataset))\n"
        "model = DDP(torch.nn.Linear(4, 1))\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for it, x in enumerate(loader):\n    loss = model(x).mean()\n    " + body + "\n    loss.backward()\n    optimizer.step()\n"
    )
    assert ("DDP012" in _codes(source)) is report


# ------------------------------------------------------------------ methods started as processes
def test_a_started_methods_self_is_no_process_index() -> None:
    """``mp.Process(target=self.train, args=(rank, ...))``: ``rank`` is the index, not ``self``;
    a bar over ``range(self.epochs)`` in it shows on every rank (CogDL's trainer)."""
    source = _DDP + (
        "from tqdm import tqdm\n\n\nclass Trainer:\n    def dist_train(self, model):\n"
        "        for rank in range(self.world_size):\n            mp.Process(target=self.train, args=(rank, model)).start()\n\n"
        "    def train(self, rank, model):\n        dist.init_process_group('nccl', rank=rank, world_size=self.world_size)\n"
        "        for epoch in tqdm(range(1, self.epochs + 1)):\n            model.step()\n"
    )
    assert "DDP012" in _codes(source)


@pytest.mark.parametrize(
    ("helper", "report"),
    [
        # Music-Source-Separation-Training: initialize_environment_ddp -> setup_ddp -> set_device
        ("def setup_ddp(rank, world_size):\n    dist.init_process_group('nccl', rank=rank, world_size=world_size)\n    torch.cuda.set_device(rank)\n", False),
        ("def setup_ddp(rank, world_size):\n    dist.init_process_group('nccl', rank=rank, world_size=world_size)\n    with torch.cuda.device(rank):\n        pass\n", False),
        # the helper joins the group and sets no device: a bare .cuda() is GPU 0 on every rank
        ("def setup_ddp(rank, world_size):\n    dist.init_process_group('nccl', rank=rank, world_size=world_size)\n", True),
    ],
)
def test_a_device_set_by_a_project_helper_two_calls_deep(tmp_path: Path, helper: str, report: bool) -> None:
    (tmp_path / "settings.py").write_text(
        f"import torch\nimport torch.distributed as dist\n\n\n{helper}\n\ndef initialize_environment_ddp(rank, world_size):\n    setup_ddp(rank, world_size)\n",
        encoding="utf-8",
    )
    script = tmp_path / "valid_ddp.py"
    script.write_text(
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from settings import initialize_environment_ddp


def worker(rank, world_size):
    initialize_environment_ddp(rank, world_size)
    model = build_model().cuda()
    model = torch.nn.parallel.DistributedDataParallel(model)


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
        encoding="utf-8",
    )
    assert ("DDP017" in _codes(script.read_text(encoding="utf-8"), str(script))) is report

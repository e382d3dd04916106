"""A script that already sets DDP up is refused (exit 2, one line naming the line and `ddpify
check`), never converted a second time: two process groups crash every rank."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ddpify.api import convert_source
from ddpify.errors import DdpifyError

TRAINING = """\
    loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for x in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
"""

SPELLINGS = {
    "dist_alias": ("import torch.distributed as dist\n", 'dist.init_process_group("gloo")\n', "init_process_group"),
    "from_import": ("from torch.distributed import init_process_group\n", "init_process_group(backend='nccl')\n", "init_process_group"),
    "c10d": ("import torch.distributed.distributed_c10d as c10d\n", "c10d.init_process_group('gloo')\n", "init_process_group"),
    "under_a_flag": ("import torch.distributed\n", "if args.distributed:\n    torch.distributed.init_process_group('nccl')\n", "init_process_group"),
    "ddp_wrap_only": ("from torch.nn.parallel import DistributedDataParallel as DDP\n", "model = DDP(model)\n", "DistributedDataParallel"),
    "nn_parallel": ("import torch.nn as nn\n", "model = nn.parallel.DistributedDataParallel(model)\n", "DistributedDataParallel"),
}


def _script(imports: str, setup: str) -> str:
    return (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        + imports
        + "model = torch.nn.Linear(1, 1)\n"
        + setup
        + textwrap.dedent(TRAINING)
    )


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_distributed_script_is_refused_with_its_line(name: str) -> None:
    imports, setup, what = SPELLINGS[name]
    source = _script(imports, setup)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if f"{what}(" in text or "DDP(" in text)
    with pytest.raises(DdpifyError) as error:
        convert_source(source, filename="train.py")
    message = str(error.value)
    assert message.startswith(f"train.py:{line}: already a distributed script ({what})"), message
    assert "ddpify check train.py" in message and "\n" not in message


def test_single_gpu_script_and_converted_output_are_not_refused() -> None:
    source = _script("", "")
    once = convert_source(source).output
    assert "ddpify.prepare_model" in once
    assert convert_source(once).output == once  # converting twice changes nothing


def test_ddp_utility_without_training_code_stays_byte_identical() -> None:
    source = "import torch.distributed as dist\n\ndef setup():\n    dist.init_process_group('nccl')\n"
    assert convert_source(source).output == source


def test_cli_exit_code_2_and_nothing_written(tmp_path) -> None:
    imports, setup, _ = SPELLINGS["dist_alias"]
    src = tmp_path / "train.py"
    src.write_text(_script(imports, setup))
    out = tmp_path / "train_ddp.py"
    run = subprocess.run([sys.executable, "-m", "ddpify", str(src), "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 2
    assert "already a distributed script" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not out.exists()

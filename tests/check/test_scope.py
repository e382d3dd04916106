"""Which files ``ddpify check`` treats as distributed scripts: every way real code reaches DDP,
not only ``import torch.distributed`` (real scripts wrap with the full dotted name, or import
``DistributedSampler`` from ``torch.utils.data``, and were skipped unchecked)."""

from __future__ import annotations

import libcst as cst
import pytest

from ddpify.check.scope import is_distributed_script, mentions_distributed

DISTRIBUTED = {
    "dist_import": "import torch.distributed as dist\n",
    "from_dist": "from torch.distributed import init_process_group\n",
    "torch_attr": "import torch\ntorch.distributed.barrier()\n",
    "full_ddp_name": "import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model)\n",
    "nn_parallel": "import torch.nn as nn\nmodel = nn.parallel.DistributedDataParallel(model)\n",
    "ddp_from_parallel": "from torch.nn.parallel import DistributedDataParallel as DDP\n",
    "sampler_from_data": "from torch.utils.data import DataLoader, DistributedSampler\n",
    "sampler_from_submodule": "from torch.utils.data.distributed import DistributedSampler\n",
    "sampler_attribute": "import torch.utils.data as tud\nsampler = tud.DistributedSampler(dataset)\n",
    "runtime": "import ddpify.runtime as ddpify\n",
}
NOT_DISTRIBUTED = {
    "single_gpu": "import torch\nmodel = torch.nn.Linear(1, 1).cuda()\n",
    "dataparallel": "import torch.nn as nn\nmodel = nn.DataParallel(model)\n",
    "word_in_a_string": "import torch\nprint('not distributed')\n",
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTED))
def test_distributed_spellings_are_checked(name: str) -> None:
    source = DISTRIBUTED[name]
    assert mentions_distributed(source)
    assert is_distributed_script(cst.parse_module(source))


@pytest.mark.parametrize("name", sorted(NOT_DISTRIBUTED))
def test_single_process_scripts_are_not(name: str) -> None:
    assert not is_distributed_script(cst.parse_module(NOT_DISTRIBUTED[name]))

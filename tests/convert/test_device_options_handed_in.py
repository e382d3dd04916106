"""unseen20r's mir_samplecnn: ``main.py`` declares ``--device`` (default ``cuda:0``) and hands the
parsed namespace to ``train.py``'s ``main(args)``, which reads ``torch.device(args.device)``:
every rank would take GPU 0. In a file whose models are DDP models, a device-like attribute of
a namespace parameter (``args``, ``opt``, ``cfg``...) used as a device becomes
``ddpify.device_from(...)``: the rank's own GPU for a CUDA device, anything else as given.
A file with no DDP model is left as it is."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_TRAIN = """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def main({holder}):
    device = torch.device({holder}.{option})
    torch.cuda.set_device(device)
    model = torch.nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
            optimizer.step()
"""


@pytest.mark.parametrize(("holder", "option"), [("args", "device"), ("opt", "gpu"), ("cfg", "device_id")])
def test_a_device_option_handed_in_is_the_ranks_own(holder: str, option: str) -> None:
    result = convert_source(_TRAIN.format(holder=holder, option=option))
    assert f"device = torch.device(ddpify.device_from({holder}.{option}))" in result.output, result.output
    assert not any(f"{holder}.{option}" in m.why for m in result.manual), result.manual
    assert convert_source(result.output).output == result.output


def test_a_file_without_ddp_models_keeps_its_device() -> None:
    helper = "import torch\n\n\ndef place(x, args):\n    return x.to(torch.device(args.device))\n"
    assert convert_source(helper).output == helper

"""unseen20s lvl1_cls: ``device = "cuda" if torch.cuda.is_available() else "cpu"`` becomes the
rank's own device name (``cuda:1`` on rank 1), and the script's ``assert device == "cuda"`` then
stopped every rank of a GPU run. A device name's own tests against ``"cuda"`` read its type
(``str(device).partition(":")[0]``), whichever side and operator; tests of ``"cpu"``, ``in``
tests and a ``torch.device`` (never equal to a string, before or after) are left as written."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
import torch.nn as nn

{assign}
{test}
model = nn.Linear(4, 1).to({device})
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

_NAME = 'device = "cuda" if torch.cuda.is_available() else "cpu"'


@pytest.mark.parametrize(
    ("assign", "test", "device", "expected"),
    [
        (_NAME, 'assert device == "cuda", "needs a GPU"', "device", 'assert str(device).partition(":")[0] == "cuda", "needs a GPU"'),
        (_NAME, "if device != 'cuda':\n    print('slow')", "device", "if str(device).partition(\":\")[0] != 'cuda':"),
        (_NAME, 'use_amp = "cuda" == device', "device", 'use_amp = "cuda" == str(device).partition(":")[0]'),
        ('args.device = "cuda" if torch.cuda.is_available() else "cpu"', 'pin = args.device == "cuda"', "args.device", 'pin = str(args.device).partition(":")[0] == "cuda"'),
    ],
)
def test_a_device_names_test_reads_its_type(assign: str, test: str, device: str, expected: str) -> None:
    result = convert_source(_SCRIPT.format(assign=assign, test=test, device=device))
    assert expected in result.output
    assert "so the test reads its type" in "\n".join(c.what for c in result.changes)
    assert convert_source(result.output).output == result.output


@pytest.mark.parametrize(
    ("assign", "test"),
    [
        (_NAME, 'if device == "cpu":\n    print("slow")'),
        (_NAME, 'if "cuda" in device:\n    print("fast")'),
        ('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', 'if device == "cuda":\n    print("never")'),
        ('mode = "cuda"', 'if mode == "cuda":\n    print("a name that is no device")'),
    ],
)
def test_other_tests_are_left_as_written(assign: str, test: str) -> None:
    result = convert_source(_SCRIPT.format(assign=assign, test=test, device="'cpu'"))
    assert test.splitlines()[0] in result.output

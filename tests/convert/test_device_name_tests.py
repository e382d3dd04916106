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


def test_membership_in_a_list_of_names_reads_the_type() -> None:
    """``device in ("cuda", "mps")`` is false for ``cuda:1``: the same class as ``==``."""
    test = 'if device in ("cuda", "mps"):\n    print("accelerated")'
    result = convert_source(_SCRIPT.format(assign=_NAME, test=test, device="device"))
    assert 'if str(device).partition(":")[0] in ("cuda", "mps"):' in result.output
    other = 'if device not in ["cpu"]:\n    print("accelerated")'
    kept = convert_source(_SCRIPT.format(assign=_NAME, test=other, device="device"))
    assert 'if device not in ["cpu"]:' in kept.output


_HELPERS = """\
import torch
import torch.nn as nn


def report(device):
    if device == "cuda":
        print("on a GPU")


def probe():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda":
        print("never: a torch.device is no string")

    def inner():
        if device == "cuda":
            print("never either: the outer function's torch.device")

    inner()


device = "cuda" if torch.cuda.is_available() else "cpu"
report(device)
probe()
model = nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
for x, y in loader:
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_function_binding_its_own_device_keeps_its_test() -> None:
    """The tests are read per binding: ``probe``'s own ``torch.device`` never equals a string,
    before or after, so its test stays; ``report``'s parameter gets the rank's name."""
    output = convert_source(_HELPERS).output
    assert 'def report(device):\n    if str(device).partition(":")[0] == "cuda":' in output
    assert '    device = torch.device(' in output and '    if device == "cuda":' in output
    assert '        if device == "cuda":' in output

"""``check --fix`` on neighbouring lines that each need a rank-0 guard writes one guard block,
not one identical ``if`` per line; other statements and the user's own guards stay apart."""

from __future__ import annotations

from ddpify.check.engine import check_source, select_rules

PLAIN = """\
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    model = torch.nn.Linear(1, 1)
    for epoch in range(2):
        print(epoch)
        # the checkpoint
        torch.save(model.state_dict(), "a.pt")

        print("saved")
        model.zero_grad()
        print("after")
    if dist.get_rank() == 0:
        print("mine")
    dist.destroy_process_group()
"""
PLAIN_FIXED = """\
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    model = torch.nn.Linear(1, 1)
    for epoch in range(2):
        if not dist.is_initialized() or dist.get_rank() == 0:
            print(epoch)
            # the checkpoint
            torch.save(model.state_dict(), "a.pt")

            print("saved")
        model.zero_grad()
        if not dist.is_initialized() or dist.get_rank() == 0:
            print("after")
    if dist.get_rank() == 0:
        print("mine")
    dist.destroy_process_group()
"""
CONVERTED = """\
import torch
import ddpify.runtime as ddpify

model = torch.nn.Linear(1, 1)
torch.save(model.state_dict(), "a.pt")
torch.save(model.state_dict(), "b.pt")
"""


def _fixed(source: str) -> str | None:
    return check_source(source, "train.py", rules=select_rules(["DDP005", "DDP012"]), fix=True).fixed


def test_adjacent_guards_become_one_block() -> None:
    assert _fixed(PLAIN) == PLAIN_FIXED


def test_one_guard_for_adjacent_saves_in_a_converted_script() -> None:
    assert _fixed(CONVERTED) == CONVERTED.replace(
        'torch.save(model.state_dict(), "a.pt")\ntorch.save(model.state_dict(), "b.pt")\n',
        'if ddpify.is_main_process():\n    torch.save(model.state_dict(), "a.pt")\n    torch.save(model.state_dict(), "b.pt")\n',
    )


def test_a_guard_joins_the_users_own_guard_of_the_same_test_only() -> None:
    guard = "if not dist.is_initialized() or dist.get_rank() == 0:\n"
    source = PLAIN.replace('    if dist.get_rank() == 0:\n        print("mine")\n', f'    {guard}        print("mine")\n    print("end")\n')
    fixed = _fixed(source)
    assert fixed is not None
    assert f'    {guard}        print("mine")\n        print("end")\n    dist.destroy_process_group()' in fixed
    different = _fixed(PLAIN.replace('        print("mine")\n', '        print("mine")\n    print("end")\n'))
    assert different is not None and f'print("mine")\n    {guard}        print("end")\n' in different

"""Parity between the converter and the linter, on generated variants of the constructs both
know (rank guards, epoch loops, loaders, saves and loads):

1. whatever ``ddpify FILE`` writes for a variant passes ``ddpify check`` (every rule);
2. undo one rewrite in that output (put the original rank guard back, drop the
   ``map_location``, save the wrapped model's state dict): ``ddpify check --fix --unsafe-fixes``
   must write back exactly what the converter wrote. (Dropping the converter's
   ``ddpify.set_epoch`` is no finding: ``ddpify.distributed_loader`` advances its own epoch;
   the line is there to be explicit.) Where the file already uses ``ddpify.runtime``, a linter fix and a
   conversion of the same construct are the same code.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddpify.api import convert_source
from ddpify.check.engine import check_source, select_rules

GUARDS = [
    "args.local_rank in [-1, 0]",
    "args.local_rank < 1",
    "not args.local_rank",
    "args.local_rank == 0",
    'os.environ["LOCAL_RANK"] == "0"',
    'int(os.environ.get("LOCAL_RANK", 0)) == 0',
]
LOADERS = {
    "plain": ("from torch.utils.data import DataLoader\n", "DataLoader"),
    "alias": ("from torch.utils.data import DataLoader as DL\n", "DL"),
    "module": ("import torch.utils.data as tud\n", "tud.DataLoader"),
    "dotted": ("", "torch.utils.data.DataLoader"),
}
EPOCH_LOOPS = ["for epoch in range(args.epochs):", "for t in range(args.epochs):", "for ep in range(n_epochs):"]
ITERATIONS = ["for x, y in {loader}:", "for i, (x, y) in enumerate({loader}):", "for batch in {loader}:\n            x, y = batch"]
LOADER_NAMES = ["loader", "train_loader", "dl"]

TEMPLATE = """\
import argparse
import os

import torch
{loader_import}
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()
n_epochs = args.epochs


def main():
    data = torch.utils.data.TensorDataset(torch.randn(16, 3), torch.randn(16, 1))
    {name} = {loader}(data, batch_size=4, shuffle=True)
    model = torch.nn.Linear(3, 1)
    if os.path.exists("ckpt.pt"):
        model.load_state_dict(torch.load("ckpt.pt"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    {epoch_loop}
        {iteration}
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        if {guard}:
            torch.save(model.state_dict(), "ckpt.pt")


if __name__ == "__main__":
    main()
"""


@st.composite
def scripts(draw: st.DrawFn) -> tuple[str, str]:
    loader_import, loader = LOADERS[draw(st.sampled_from(sorted(LOADERS)))]
    name = draw(st.sampled_from(LOADER_NAMES))
    guard = draw(st.sampled_from(GUARDS))
    source = TEMPLATE.format(
        loader_import=loader_import,
        loader=loader,
        name=name,
        epoch_loop=draw(st.sampled_from(EPOCH_LOOPS)),
        iteration=draw(st.sampled_from(ITERATIONS)).format(loader=name),
        guard=guard,
    )
    return source, guard


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALL_RULES = select_rules(["DDP"])


def _converted(source: str) -> str:
    output = convert_source(source).output
    assert output != source
    return output


@SETTINGS
@given(scripts())
def test_converted_variant_checks_clean(script: tuple[str, str]) -> None:
    output = _converted(script[0])
    findings = check_source(output, "train_ddp.py", rules=ALL_RULES).findings
    assert not findings, [f"{f.line}: {f.code} {f.message}" for f in findings]


def _fixed(broken: str) -> str:
    result = check_source(broken, "train_ddp.py", rules=ALL_RULES, fix=True, unsafe_fixes=True)
    return result.fixed if result.fixed is not None else broken


UNDO = {
    "unwrapped_state_dict": lambda output, guard: output.replace("ddpify.unwrap(model).state_dict()", "model.state_dict()", 1),
    "rank_guard": lambda output, guard: output.replace("if ddpify.is_main_process():", f"if {guard}:", 1),
    "map_location": lambda output, guard: output.replace(", map_location=ddpify.device()", "", 1),
}


@SETTINGS
@given(scripts(), st.sampled_from(sorted(UNDO)))
def test_linter_fix_writes_what_the_converter_wrote(script: tuple[str, str], undo: str) -> None:
    source, guard = script
    output = _converted(source)
    broken = UNDO[undo](output, guard)
    assert broken != output, f"the converter's output has no {undo} to undo"
    assert _fixed(broken) == output

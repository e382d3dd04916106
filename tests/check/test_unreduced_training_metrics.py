"""DDP036: a training loop's running metric, from this rank's shard, logged on rank 0 or acted on.

Spellings from real DDP code (meters named by their class, a Hugging Face ``tr_loss``, a
returned tuple compared by the caller, an accuracy count turned into a ratio) and the shapes
that are not the finding: a loss recomputed every step, a step counter, a timer, a value that
every rank prints with the others, a value reduced by a project helper."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source
from ddpify.check.rules import BY_CODE

RULE = BY_CODE["DDP036"]
HEADER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data))
model = DDP(model)
"""

FLAGGED = {
    "meter known by its class, logged by local rank 0": """
avg_rec = AverageMeter()
for step, batch in enumerate(loader):
    optimizer.zero_grad()
    loss = model(batch)
    loss.backward()
    optimizer.step()
    avg_rec.update(loss.item())
    if step % 100 == 0 and local_rank == 0:
        logger.info("loss_rec {:.4e}".format(avg_rec.avg))
""",
    "Hugging Face running tr_loss logged by the global rank 0": """
tr_loss, global_step = 0.0, 0
for step, batch in enumerate(loader):
    loss = model(**batch)[0]
    tr_loss += loss.item()
    loss.backward()
    optimizer.step()
    global_step += 1
    if args.global_rank == 0 and global_step % args.log_steps == 0:
        train_loss = round(tr_loss / global_step, 4)
        logger.info("step {}: train loss {}".format(global_step, train_loss))
""",
    "returned tuple, best checkpoint chosen by the caller": """

def train_epoch(epoch):
    epoch_loss = epoch_dice = 0
    for step, batch in enumerate(loader):
        loss = model(batch)
        epoch_loss += loss.item()
        epoch_dice += dice(batch)
        loss.backward()
        optimizer.step()
    return epoch_loss / (step + 1), epoch_dice / (step + 1)


for epoch in range(10):
    epoch_loss, epoch_dice = train_epoch(epoch)
    if dist.get_rank() == 0 and epoch_dice > best_dice:
        best_dice = epoch_dice
        torch.save(model.module.state_dict(), "best.pt")
""",
    "accuracy count written to TensorBoard by rank 0": """
correct = seen = 0
for x, y in loader:
    out = model(x)
    criterion(out, y).backward()
    optimizer.step()
    correct += (out.argmax(1) == y).sum().item()
    seen += y.numel()
if dist.get_rank() == 0:
    writer.add_scalar("train/acc", correct / seen, epoch)
""",
}

CLEAN = {
    "a loss recomputed every step (an auxiliary loss added to it)": """
for batch in loader:
    loss = model(batch)
    loss += aux_weight * aux(batch)
    loss.backward()
    optimizer.step()
    if dist.get_rank() == 0:
        print("loss", loss.item())
""",
    "a step counter compared with the logging interval": """
num_updates = 0
for batch in loader:
    model(batch).backward()
    optimizer.step()
    num_updates += 1
    if dist.get_rank() == 0 and num_updates > 100:
        print("warm")
""",
    "a timer meter": """
batch_time = AverageMeter()
for batch in loader:
    model(batch).backward()
    optimizer.step()
    batch_time.update(time.time() - end)
    if dist.get_rank() == 0:
        print(f"time {batch_time.avg:.3f}")
""",
    "every rank prints its own value (DDP012's finding)": """
running_loss = 0.0
for batch in loader:
    loss = model(batch)
    loss.backward()
    optimizer.step()
    running_loss += loss.item()
print(f"rank {dist.get_rank()} loss {running_loss / len(loader):.3f}")
""",
    "reduced by a project helper named for it": """

def train_one_epoch():
    losses = AverageMeter()
    for batch in loader:
        loss = model(batch)
        loss.backward()
        optimizer.step()
        losses.update(reduce_loss_dict({"loss": loss})["loss"].item())
    return losses.avg


train_loss = train_one_epoch()
if dist.get_rank() == 0:
    print("train loss", train_loss)
""",
    "an evaluation loop (DDP014's)": """
val_loss = 0.0
with torch.no_grad():
    for x, y in loader:
        val_loss += criterion(model(x), y).item()
if dist.get_rank() == 0:
    print(val_loss / len(loader))
""",
}


def _findings(body: str) -> list[int]:
    return [f.line for f in check_source(HEADER + body, rules=[RULE]).findings]


@pytest.mark.parametrize("body", FLAGGED.values(), ids=FLAGGED.keys())
def test_flagged(body: str) -> None:
    assert len(_findings(body)) == 1


@pytest.mark.parametrize("body", CLEAN.values(), ids=CLEAN.keys())
def test_clean(body: str) -> None:
    assert _findings(body) == []


def test_decision_is_reported_before_the_log_line() -> None:
    """Both a log and a best-so-far test read the value: the finding is at the test, where
    acting on one shard's value does the harm."""
    body = FLAGGED["returned tuple, best checkpoint chosen by the caller"]
    lines = (HEADER + body).splitlines()
    (line,) = _findings(body)
    assert "epoch_dice > best_dice" in lines[line - 1]


_TRAINER = """\
import torch


class ModelTrainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train_network(self, loader):
        loss, top1, counter = 0, 0, 0
        for x, y in loader:
            self.optimizer.zero_grad()
            nloss = torch.nn.functional.cross_entropy(self.model(x), y)
            nloss.backward()
            self.optimizer.step()
            loss += nloss.item()
            top1 += (self.model(x).argmax(1) == y).float().mean().item()
            counter += 1
        {reduce}return loss / counter, top1 / counter, counter
"""

_SCRIPT = """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer import ModelTrainer

model = DDP(model)
trainer = ModelTrainer(model, optimizer)
for epoch in range(10):
    loss, acc, steps = trainer.train_network(loader)
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: {steps} steps")
        print(f"epoch {epoch}: train loss {loss:.3f}")
"""


@pytest.mark.parametrize(("reduce", "expected"), [("", [12]), ("dist.all_reduce(torch.tensor([loss]))\n        ", [])], ids=["unreduced", "reduced"])
def test_returned_by_a_trainer_of_another_module(tmp_path, reduce: str, expected: list[int]) -> None:
    """voxceleb_trainer's shape: ``SpeakerNet.ModelTrainer.train_network`` returns its loop's
    running loss and accuracy, and the script logs them on GPU 0. The returned step count is not
    a metric: its print is not the finding; the loss's is."""
    (tmp_path / "setup.py").touch()
    (tmp_path / "trainer.py").write_text(_TRAINER.replace("{reduce}", reduce.replace("dist.", "torch.distributed.")))
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT)
    assert [f.line for f in check_source(_SCRIPT, str(script), rules=[RULE]).findings] == expected

from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst

from ddpify.analysis import project_files
from ddpify.check import fixes
from ddpify.check.checkpoints import Save, checkpoints
from ddpify.check.rule import Invalid, Rule


class WrappedStateDictSaved(Rule):
    code = "DDP007"
    name = "wrapped-state-dict-saved"
    message = "state_dict() of the DDP-wrapped model is saved: every key gets a 'module.' prefix"
    severity = "warning"
    why = (
        "DistributedDataParallel keeps the real model in its `.module` attribute, so the wrapper's "
        "`state_dict()` names every parameter `module.<name>` (NVIDIA/apex#647, "
        "pytorch/pytorch#41048). A checkpoint saved that way no longer loads into the plain model "
        "(single-GPU evaluation, inference, fine-tuning): `load_state_dict` fails with "
        '"Missing key(s) ... Unexpected key(s) module.features...". Save the unwrapped model\'s '
        "state instead (`model.module.state_dict()`). Reported: a wrapper's state saved where the "
        "model is wrapped only in some runs (the checkpoint's keys depend on how it was launched), "
        "saved and never read back through the wrapper by this script (an export for other "
        "programs), or read back by this script into the plain model. Not reported: a resume "
        "checkpoint of a model that is always wrapped (also where the runs without the wrapper "
        "stop: `else: raise NotImplementedError(...)`), saved and loaded through the wrapper, also "
        "by a loader of the project's own modules whatever its name "
        "(`restart_from_checkpoint(path, state_dict=model)`: the keys match), and a script whose loads strip the prefix themselves, also through a loader "
        "of the project's own modules (`ckpt.load_weights(model, path)` whose code names "
        '`"module."` or slices it off, or `model.load_state_dict(fix_legacy_dict(torch.load(p)))` '
        "with a function of the project that drops it from the dict it returns): `module.` keys are "
        "then the project's format; so are they when another file of the project reads the saved entry "
        "and drops the prefix on the way (a fine-tuning script's `{k.replace('module.', ''): v for k, v in "
        "checkpoint['encoder'].items()}`, or `k[7:]`, in the function or top-level code that reads it), or "
        "loads it into a model it wrapped first (an evaluation script's `nn.DataParallel(model)`)."
    )
    default = True
    fix = "unsafe"
    fix_notes = (
        'The fix saves `model.module.state_dict()` (`getattr(model, "module", model).state_dict()` '
        "where a single-process run leaves the model plain). It is offered only when this script "
        "never loads a checkpoint back into the wrapper: otherwise its resume would look for "
        "'module.' keys in the new plain file (and with `strict=False` silently restore nothing). "
        "It is safe where this script's own load of the checkpoint goes into the plain model (the "
        "fix makes the two agree), unsafe otherwise: programs that read the file elsewhere see a "
        "new key layout."
    )
    false_positives = "A checkpoint read back through the wrapper by another script of the project."
    valid = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

if torch.cuda.device_count() > 1 and cfg.MODEL.DIST_TRAIN:
    model = DDP(model, device_ids=[local_rank])
train(model)
if cfg.MODEL.DIST_TRAIN:
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "model.pth")
else:
    torch.save(model.state_dict(), "model.pth")  # the branch without the wrapper
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

torch.save(model.state_dict(), "init.pt")  # before the wrap: no prefix yet
model = DDP(model)
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main_worker(gpu, args):
    model = DDP(build_model().cuda(gpu), device_ids=[gpu])  # always wrapped
    if (args.checkpoint_dir / "checkpoint.pth").is_file():
        ckpt = torch.load(args.checkpoint_dir / "checkpoint.pth", map_location="cpu")
        model.load_state_dict(ckpt["model"])  # through the wrapper: 'module.' keys both ways
    for epoch in range(args.epochs):
        train_one_epoch(model)
        if args.rank == 0:
            torch.save(dict(epoch=epoch + 1, model=model.state_dict()), args.checkpoint_dir / "checkpoint.pth")
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
if dist.get_rank() == 0:
    torch.save(model.state_dict(), "model.pt")
""",
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[local_rank])
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

if args.distributed:
    net = DistributedDataParallel(net)
checkpoint = {"epoch": epoch, "model": net.state_dict()}
if not args.distributed or dist.get_rank() == 0:
    torch.save(checkpoint, "ckpt.pt")
""",
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

if args.distributed:
    net = DistributedDataParallel(net)
checkpoint = {"epoch": epoch, "model": getattr(net, "module", net).state_dict()}
if not args.distributed or dist.get_rank() == 0:
    torch.save(checkpoint, "ckpt.pt")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

if args.distributed:
    model = DDP(model)
if args.resume:
    model.load_state_dict(torch.load(args.resume, map_location="cpu")["state_dict"], strict=False)
if not args.distributed or dist.get_rank() == 0:
    torch.save({"state_dict": model.state_dict()}, "checkpoint.pth")  # keys depend on the launch
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        found = checkpoints(self)
        for save in found.saves:
            if not save.wrapped:
                continue
            always = found.always.get(save.model, False)
            into_wrapper = found.loads_into_wrapper(save.model)
            plain_readers = [load for load in found.loads if not load.wrapped and not load.aware and found.paired(save, load)]
            if always and into_wrapper and not plain_readers:
                continue  # a resume checkpoint read back through the wrapper: the keys match
            if any(load.model == save.model and load.aware for load in found.loads):
                continue  # the script strips the prefix itself where it loads
            if save.key is not None and self._read_unprefixed_elsewhere(save.key):
                continue  # the project's own readers of this entry strip the prefix: its convention
            self._report(save, always, fixable=not into_wrapper, safe=bool(plain_readers))

    def _read_unprefixed_elsewhere(self, entry: str) -> bool:
        """Another file of the project reads this checkpoint entry and drops the 'module.'
        prefix (PAWS's fine_tune.py on ``checkpoint['encoder']``)."""
        path = self.file.path
        return path is not None and Path(path).is_file() and project_files.strips_prefix_elsewhere(Path(path), entry)

    def _report(self, save: Save, always: bool, *, fixable: bool, safe: bool) -> None:
        if always:
            message = f"{save.model}.state_dict() of the DDP-wrapped model is saved: every key gets a 'module.' prefix, so the plain model cannot load it"
        else:
            message = (
                f"{save.model}.state_dict() is saved while {save.model} is wrapped in DDP only in some runs: the checkpoint's "
                "keys have a 'module.' prefix or not depending on how it was launched"
            )
        owner = save.call.func.value  # type: ignore[attr-defined]
        replacement = None
        if fixable:
            replacement = functools.partial(_unwrapped_call, save.call, owner, always)
        self.report(save.call, message=message, replacement=replacement, safety="safe" if safe else "unsafe")


def _unwrapped_call(call: cst.Call, owner: cst.BaseExpression, always: bool) -> cst.Call:
    func = call.func
    assert isinstance(func, cst.Attribute)
    return call.with_changes(func=func.with_changes(value=fixes.unwrapped(owner, always_wrapped=always)))

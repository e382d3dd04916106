"""Train a small residual image classifier with DistributedDataParallel, written by hand.

The distributed twin of ``train.py``: the same script made DDP-correct the usual way (a
process group from torchrun's environment, a device per rank, a DistributedSampler with
set_epoch, the DDP wrap, rank-0 logging and checkpoints, map_location on load). The benchmark
lints it with ``ddpify check`` and TorchFix, and times its training steps against ``train.py``
converted by ``ddpify``.

A realistic ~500-line training script (argument parsing, a dataset class, a model, AdamW
with warmup and cosine decay, gradient clipping, optional mixed precision, an exponential
moving average of the weights, evaluation, best/last checkpoints, resuming, a CSV log and
early stopping) that runs anywhere: the data is synthetic (noise images labelled by a fixed
random teacher), so nothing is downloaded.

``--batch-size`` is the global batch: each of N processes takes batch_size / N.

Usage:
    torchrun --nproc_per_node=2 train_ddp.py --epochs 3 --out-dir runs/small
    torchrun --nproc_per_node=2 train_ddp.py --epochs 6 --resume runs/small/last.pt --out-dir runs/small
"""

import argparse
import csv
import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import Optional

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

NUM_CLASSES = 10
IMAGE_SIZE = 32
CHANNELS = 3


# --------------------------------------------------------------------------- distributed
def setup_distributed() -> tuple[int, int, int, torch.device]:
    """Join torchrun's process group (one process without a launcher): rank, local rank,
    world size and this process's device."""
    if "RANK" not in os.environ:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return 0, 0, 1, device
    rank, local_rank, world = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        device = torch.device("cuda", local_rank)
    else:
        dist.init_process_group("gloo")
        device = torch.device("cpu")
    return rank, local_rank, world, device


def is_main() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def log(*parts: object) -> None:
    if is_main():
        print(*parts, flush=True)


# --------------------------------------------------------------------------- arguments
def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data = parser.add_argument_group("data")
    data.add_argument("--train-size", type=int, default=4096, help="synthetic training images")
    data.add_argument("--val-size", type=int, default=512, help="synthetic validation images")
    data.add_argument("--workers", type=int, default=0, help="data loading processes")
    data.add_argument("--noise", type=float, default=0.6, help="pixel noise added to each image")
    data.add_argument("--augment", action="store_true", help="random flips and crops while training")
    model = parser.add_argument_group("model")
    model.add_argument("--width", type=int, default=32, help="channels of the first stage")
    model.add_argument("--blocks", type=int, default=2, help="residual blocks per stage")
    model.add_argument("--dropout", type=float, default=0.1)
    optim = parser.add_argument_group("optimisation")
    optim.add_argument("--epochs", type=int, default=5)
    optim.add_argument("--batch-size", type=int, default=128, help="images per optimizer step")
    optim.add_argument("--lr", type=float, default=2e-3)
    optim.add_argument("--weight-decay", type=float, default=0.05)
    optim.add_argument("--warmup-steps", type=int, default=50)
    optim.add_argument("--clip-grad", type=float, default=1.0, help="max gradient norm (0: off)")
    optim.add_argument("--label-smoothing", type=float, default=0.1)
    optim.add_argument("--ema-decay", type=float, default=0.0, help="EMA of the weights (0: off)")
    optim.add_argument("--amp", action="store_true", help="mixed precision on CUDA")
    optim.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    run = parser.add_argument_group("run")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--out-dir", default="runs/train")
    run.add_argument("--resume", default="", help="checkpoint to resume from")
    run.add_argument("--log-every", type=int, default=20, help="steps between progress lines")
    run.add_argument("--patience", type=int, default=0, help="stop after this many epochs without improvement")
    run.add_argument("--no-save", action="store_true", help="write no checkpoints")
    return parser.parse_args(argv)


# --------------------------------------------------------------------------- data
class SyntheticImages(Dataset):
    """Blocky random scenes, upsampled and noised; the label is a random teacher's argmax.

    Every image is generated from its index, so the dataset needs no memory and is identical
    in every process that builds it.
    """

    def __init__(self, size: int, seed: int, noise: float, augment: bool = False) -> None:
        self.size = size
        self.seed = seed
        self.noise = noise
        self.augment = augment
        teacher_rng = torch.Generator().manual_seed(1234)
        self.teacher = torch.randn(CHANNELS * 4 * 4, NUM_CLASSES, generator=teacher_rng)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        rng = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        scene = torch.randn(CHANNELS, 4, 4, generator=rng)
        label = int((scene.flatten() @ self.teacher).argmax())
        image = F.interpolate(scene[None], size=(IMAGE_SIZE, IMAGE_SIZE), mode="nearest")[0]
        image = image + self.noise * torch.randn(image.shape, generator=rng)
        if self.augment:
            image = augment(image)
        return image, label


def augment(image: torch.Tensor) -> torch.Tensor:
    """A random horizontal flip and a random 4-pixel shift (the global RNG decides)."""
    if random.random() < 0.5:
        image = image.flip(-1)
    dx, dy = random.randint(-4, 4), random.randint(-4, 4)
    return torch.roll(image, shifts=(dy, dx), dims=(1, 2))


def build_loaders(args: argparse.Namespace, world: int) -> tuple[DataLoader, DataLoader, Optional[DistributedSampler]]:
    """The training set is sharded (a DistributedSampler, batch_size / world per process);
    every process evaluates the whole validation set, so metrics agree across ranks."""
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} does not divide by {world} processes")
    train_set = SyntheticImages(args.train_size, seed=args.seed, noise=args.noise, augment=args.augment)
    val_set = SyntheticImages(args.val_size, seed=args.seed + 1, noise=args.noise)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed, drop_last=True) if world > 1 else None
    train_loader = DataLoader(
        train_set, batch_size=args.batch_size // world, shuffle=sampler is None, sampler=sampler,
        num_workers=args.workers, drop_last=True, pin_memory=torch.cuda.is_available(),
    )
    val_loader = DataLoader(val_set, batch_size=256, shuffle=False, num_workers=args.workers)
    return train_loader, val_loader, sampler


# --------------------------------------------------------------------------- model
class ResidualBlock(nn.Module):
    def __init__(self, channels_in: int, channels_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or channels_in != channels_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(channels_in, channels_out, 1, stride=stride, bias=False),
                nn.BatchNorm2d(channels_out),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNetSmall(nn.Module):
    """Three stages of residual blocks (width, 2x, 4x channels), global pooling, a linear head."""

    def __init__(self, width: int = 32, blocks: int = 2, dropout: float = 0.1, num_classes: int = NUM_CLASSES) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(CHANNELS, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        )
        stages = []
        channels = width
        for stage, multiplier in enumerate((1, 2, 4)):
            out_channels = width * multiplier
            for block in range(blocks):
                stride = 2 if stage > 0 and block == 0 else 1
                stages.append(ResidualBlock(channels, out_channels, stride))
                channels = out_channels
        self.stages = nn.Sequential(*stages)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(channels, num_classes)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.head(self.dropout(x))


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside a DDP wrapper (no ``module.`` prefix in its state dict)."""
    return model.module if isinstance(model, DDP) else model


class ModelEma:
    """An exponential moving average of a model's weights, evaluated instead of the model."""

    def __init__(self, model: nn.Module, decay: float) -> None:
        self.decay = decay
        self.shadow = {name: value.detach().clone() for name, value in unwrap(model).state_dict().items()}

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        for name, value in unwrap(model).state_dict().items():
            if value.dtype.is_floating_point:
                self.shadow[name].mul_(self.decay).add_(value.detach(), alpha=1 - self.decay)
            else:
                self.shadow[name].copy_(value)

    def state_dict(self) -> dict:
        return dict(self.shadow)

    def load_state_dict(self, state: dict) -> None:
        self.shadow = {name: value.clone() for name, value in state.items()}


# --------------------------------------------------------------------------- optimisation
def build_scheduler(optimizer: torch.optim.Optimizer, warmup: int, total: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warmup, then cosine decay to 5% of the peak rate."""

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return 0.05 + 0.95 * 0.5 * (1.0 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


@dataclass
class Meter:
    """Running sums for a loss and an accuracy."""

    loss: float = 0.0
    correct: int = 0
    count: int = 0
    history: list[float] = field(default_factory=list)

    def add(self, loss: float, logits: torch.Tensor, labels: torch.Tensor) -> None:
        batch = labels.numel()
        self.loss += loss * batch
        self.correct += int((logits.argmax(dim=1) == labels).sum())
        self.count += batch

    @property
    def mean_loss(self) -> float:
        return self.loss / max(1, self.count)

    @property
    def accuracy(self) -> float:
        return self.correct / max(1, self.count)


@dataclass
class StepTimer:
    """Wall time of every training iteration (data included), the first of each epoch aside."""

    durations: list[float] = field(default_factory=list)
    last: Optional[float] = None

    def start_epoch(self) -> None:
        self.last = None

    def tick(self) -> None:
        now = time.perf_counter()
        if self.last is not None:
            self.durations.append(now - self.last)
        self.last = now

    def median_ms(self) -> float:
        if not self.durations:
            return float("nan")
        ordered = sorted(self.durations)
        return 1000.0 * ordered[len(ordered) // 2]


# --------------------------------------------------------------------------- train / eval
def train_one_epoch(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer,
                    scheduler: torch.optim.lr_scheduler.LambdaLR, scaler: torch.amp.GradScaler,
                    ema: Optional[ModelEma], device: torch.device, args: argparse.Namespace,
                    epoch: int, step: int, timer: StepTimer) -> tuple[Meter, int]:
    model.train()
    meter = Meter()
    timer.start_epoch()
    for batch_index, (images, labels) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, enabled=args.amp and device.type == "cuda"):
            logits = model(images)
            loss = F.cross_entropy(logits, labels, label_smoothing=args.label_smoothing)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if args.clip_grad > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        if ema is not None:
            ema.update(model)
        meter.add(loss.item(), logits.detach(), labels)
        step += 1
        timer.tick()
        if args.log_every and step % args.log_every == 0:
            lr = optimizer.param_groups[0]["lr"]
            log(f"epoch {epoch} step {step} batch {batch_index + 1}/{len(loader)} "
                  f"loss {meter.mean_loss:.4f} acc {meter.accuracy:.3f} lr {lr:.2e}")
        if args.max_steps and step >= args.max_steps:
            break
    return meter, step


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> Meter:
    model.eval()
    meter = Meter()
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        meter.add(F.cross_entropy(logits, labels).item(), logits, labels)
    return meter


def evaluate_ema(model: nn.Module, ema: ModelEma, loader: DataLoader, device: torch.device) -> Meter:
    """Evaluate with the averaged weights, then put the live weights back."""
    plain = unwrap(model)
    live = {name: value.clone() for name, value in plain.state_dict().items()}
    plain.load_state_dict(ema.state_dict())
    try:
        return evaluate(model, loader, device)
    finally:
        plain.load_state_dict(live)


# --------------------------------------------------------------------------- checkpoints
def save_checkpoint(path: str, model: nn.Module, optimizer: torch.optim.Optimizer,
                    scheduler: torch.optim.lr_scheduler.LambdaLR, ema: Optional[ModelEma],
                    epoch: int, step: int, best: float) -> None:
    if not is_main():
        return
    state = {
        "model": unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "ema": ema.state_dict() if ema is not None else None,
        "epoch": epoch,
        "step": step,
        "best": best,
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str, model: nn.Module, optimizer: torch.optim.Optimizer,
                    scheduler: torch.optim.lr_scheduler.LambdaLR, ema: Optional[ModelEma]) -> tuple[int, int, float]:
    state = torch.load(path, map_location=next(model.parameters()).device)
    unwrap(model).load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    if ema is not None and state.get("ema") is not None:
        ema.load_state_dict(state["ema"])
    log(f"resumed from {path}: epoch {state['epoch']}, step {state['step']}, best {state['best']:.3f}")
    return state["epoch"] + 1, state["step"], state["best"]


class CsvLog:
    """One row per epoch in out_dir/log.csv (appended to when resuming)."""

    FIELDS = ("epoch", "step", "train_loss", "train_acc", "val_loss", "val_acc", "lr", "seconds")

    def __init__(self, path: str, resume: bool) -> None:
        self.path = path
        if not resume or not os.path.exists(path):
            with open(path, "w", newline="") as handle:
                csv.writer(handle).writerow(self.FIELDS)

    def write(self, **row: float) -> None:
        with open(self.path, "a", newline="") as handle:
            csv.writer(handle).writerow([row[name] for name in self.FIELDS])


# --------------------------------------------------------------------------- main
def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def main(argv: Optional[list[str]] = None) -> None:
    args = parse_args(argv)
    rank, local_rank, world, device = setup_distributed()
    try:
        run(args, rank, local_rank, world, device)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def run(args: argparse.Namespace, rank: int, local_rank: int, world: int, device: torch.device) -> None:
    seed_everything(args.seed)  # the same initial model on every rank
    if is_main():
        os.makedirs(args.out_dir, exist_ok=True)
    torch.backends.cudnn.benchmark = True

    train_loader, val_loader, sampler = build_loaders(args, world)
    model = ResNetSmall(width=args.width, blocks=args.blocks, dropout=args.dropout).to(device)
    if world > 1:
        model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    random.seed(args.seed + rank)  # but different augmentation and dropout per rank
    torch.manual_seed(args.seed + rank)
    # AdamW without weight decay on biases and normalisation weights
    decay = [p for name, p in model.named_parameters() if p.requires_grad and p.ndim > 1 and not name.endswith(".bias")]
    no_decay = [p for name, p in model.named_parameters() if p.requires_grad and (p.ndim <= 1 or name.endswith(".bias"))]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.99),
    )
    steps_per_epoch = len(train_loader)
    total_steps = args.epochs * steps_per_epoch
    if args.max_steps:
        total_steps = min(total_steps, args.max_steps)
    scheduler = build_scheduler(optimizer, args.warmup_steps, total_steps)
    scaler = torch.amp.GradScaler(device.type, enabled=args.amp and device.type == "cuda")
    ema = ModelEma(model, args.ema_decay) if args.ema_decay > 0 else None
    parameters = sum(p.numel() for p in model.parameters())
    log(f"{parameters / 1e6:.2f}M parameters, {steps_per_epoch} steps per epoch, device {device}")

    start_epoch, step, best = 0, 0, 0.0
    if args.resume:
        start_epoch, step, best = load_checkpoint(args.resume, model, optimizer, scheduler, ema)
    csv_log = CsvLog(os.path.join(args.out_dir, "log.csv"), resume=bool(args.resume)) if is_main() else None
    timer = StepTimer()
    epochs_without_improvement = 0

    for epoch in range(start_epoch, args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)  # a new shuffle every epoch, the same on every rank
        started = time.time()
        train_meter, step = train_one_epoch(
            model, train_loader, optimizer, scheduler, scaler, ema, device, args, epoch, step, timer,
        )
        val_meter = evaluate_ema(model, ema, val_loader, device) if ema is not None else evaluate(model, val_loader, device)
        seconds = time.time() - started
        lr = optimizer.param_groups[0]["lr"]
        log(f"epoch {epoch}: train loss {train_meter.mean_loss:.4f} acc {train_meter.accuracy:.3f} | "
              f"val loss {val_meter.mean_loss:.4f} acc {val_meter.accuracy:.3f} | {seconds:.1f}s")
        if csv_log is not None:
            csv_log.write(epoch=epoch, step=step, train_loss=train_meter.mean_loss, train_acc=train_meter.accuracy,
                          val_loss=val_meter.mean_loss, val_acc=val_meter.accuracy, lr=lr, seconds=seconds)

        improved = val_meter.accuracy > best
        if improved:
            best = val_meter.accuracy
            epochs_without_improvement = 0
        else:
            epochs_without_improvement += 1
        if not args.no_save:
            save_checkpoint(os.path.join(args.out_dir, "last.pt"), model, optimizer, scheduler, ema, epoch, step, best)
            if improved and is_main():
                torch.save(unwrap(model).state_dict(), os.path.join(args.out_dir, "best_model.pt"))
            if dist.is_initialized():
                dist.barrier()  # the checkpoint is whole before any rank may read it
        if args.patience and epochs_without_improvement >= args.patience:
            log(f"no improvement for {args.patience} epochs: stopping")
            break
        if args.max_steps and step >= args.max_steps:
            break

    log(f"best val acc {best:.3f}")
    log(f"step_ms_median={timer.median_ms():.3f} steps={len(timer.durations)}")


if __name__ == "__main__":
    main()

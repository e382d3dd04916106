"""The runtime's guard rails, in this process (a one-rank gloo group; the arrival check on an
in-memory store standing in for the other ranks): each mistake raises GuardError naming the
call site, and correct code runs untouched. The same guards under torchrun: test_verify_runs."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch.utils.data import RandomSampler

from ddpify.runtime import _arrival, _guard, _model
from ddpify.runtime._data import ShardedSampler, _pad_and_shard
from ddpify.runtime._guard import GuardedDDP, GuardError

HERE = Path(__file__).name


@pytest.fixture
def group(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A process group of one rank, destroyed afterwards (other tests must not see it)."""
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "DDPIFY_GUARDS", "DDPIFY_VERIFY"):
        monkeypatch.delenv(name, raising=False)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = torch.nn.Linear(3, 4)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x).sum(dim=1, keepdim=True)


def _step(optimizer: torch.optim.Optimizer, output: torch.Tensor) -> None:
    optimizer.zero_grad()
    output.sum().backward()
    optimizer.step()


def test_a_move_after_the_wrap_names_both_places(group: None) -> None:
    wrapped = GuardedDDP(Net(), wrap_site="train.py:12")
    wrapped.cpu()  # the same device: fine
    wrapped.to(torch.float64)  # not a move
    with pytest.raises(GuardError, match=rf"{HERE}:\d+ moves the DDP-wrapped model from cpu to meta .* at train.py:12") as caught:
        wrapped.to("meta")
    assert caught.value.row == "wrapped"


def test_a_step_whose_gradients_bypassed_the_wrapper_raises(group: None) -> None:
    wrapped = GuardedDDP(Net(), wrap_site="train.py:12")
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=0.1)
    _step(optimizer, wrapped(torch.randn(2, 3)))  # through the wrapper
    with pytest.raises(GuardError, match=rf"optimizer.step\(\) at {HERE}:\d+: Net .* no forward went through") as caught:
        _step(optimizer, wrapped.module(torch.randn(2, 3)))
    assert caught.value.row == "forward" and "DDPIFY_VERIFY=1 names the call" in str(caught.value)


def test_the_models_own_members_are_read_through_the_wrapper_and_training_through_them_still_raises(group: None) -> None:
    """Another file's code calling ``G.sample_latent(n)`` or reading ``model.config`` on the
    wrapper gets the model's member; a step trained only through such a method still raises."""
    net = Net()
    net.config = {"width": 4}  # type: ignore[assignment]
    wrapped = GuardedDDP(net, wrap_site="train.py:12")
    assert wrapped.config == {"width": 4} and wrapped.encoder is net.encoder
    with torch.no_grad():
        assert wrapped.encode(torch.ones(1, 3)).shape == (1, 1)
    with pytest.raises(AttributeError):
        wrapped.no_such_member  # noqa: B018
    with pytest.raises(AttributeError):
        wrapped._private_of_the_model  # noqa: B018  (private names stay the wrapper's)
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=0.1)
    _step(optimizer, wrapped(torch.randn(2, 3)))
    with pytest.raises(GuardError, match="no forward went through"):
        _step(optimizer, wrapped.encode(torch.randn(2, 3)))


def test_verify_mode_names_the_method_that_bypassed_the_wrapper(group: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DDPIFY_VERIFY", "1")
    wrapped = GuardedDDP(Net(), wrap_site="train.py:12")
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=0.1)
    line = _line_of("wrapped.module.encode(torch.randn(2, 3))")
    with pytest.raises(GuardError, match=rf"Net.encode called at {HERE}:{line}, on the inner model"):
        _step(optimizer, wrapped.module.encode(torch.randn(2, 3)))


def test_correct_training_is_untouched(group: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two optimizers over one model, a closure optimizer, a step without gradients."""
    wrapped = GuardedDDP(Net(), wrap_site="train.py:12")
    body = torch.optim.SGD(wrapped.module.encoder.parameters(), lr=0.1)
    head = torch.optim.Adam(wrapped.module.head.parameters())
    for _ in range(3):
        body.zero_grad()
        head.zero_grad()
        wrapped(torch.randn(2, 3)).sum().backward()
        body.step()
        head.step()
    lbfgs = torch.optim.LBFGS(wrapped.parameters(), max_iter=2)

    def closure() -> torch.Tensor:
        lbfgs.zero_grad()
        loss = wrapped(torch.randn(2, 3)).pow(2).sum()
        loss.backward()
        return loss

    lbfgs.step(closure)
    lbfgs.step(closure)


def test_guards_off_means_plain_ddp_behaviour(group: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DDPIFY_GUARDS", "0")
    wrapped = GuardedDDP(Net(), wrap_site="train.py:12")
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=0.1)
    _step(optimizer, wrapped(torch.randn(2, 3)))
    _step(optimizer, wrapped.module(torch.randn(2, 3)))  # not checked
    wrapped.to("meta")  # not checked


def test_prepare_model_moves_only_a_model_on_another_gpu() -> None:
    """Every rank on cuda:0 is fixed; a CPU model stays on the CPU (the script's batches stay
    where the script puts them: moving the model would meet CPU targets with CUDA outputs)."""
    cuda0, cuda1, cpu = torch.device("cuda", 0), torch.device("cuda", 1), torch.device("cpu")
    assert _model._moves_to({cuda0}, cuda1)
    assert not _model._moves_to({cuda1}, cuda1)
    assert not _model._moves_to({cpu}, cuda1)
    assert not _model._moves_to({torch.device("meta")}, cuda1)
    assert not _model._moves_to({cuda0, cpu}, cuda1)  # spread over devices: the script's choice
    assert not _model._moves_to({cuda0}, cpu)  # no CUDA here
    # on_rank_device=True (a model another file's trainer may move after the wrap): the CPU too
    assert _model._moves_to({cpu}, cuda1, cpu_too=True)
    assert not _model._moves_to({cpu}, cpu, cpu_too=True)


def test_on_rank_device_leaves_a_cpu_model_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_model, "device", lambda: torch.device("cuda", 1))
    model = torch.nn.Linear(2, 2)
    assert _model._on_rank_device(model) is model and model.weight.device.type == "cpu"


def _line_of(text: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line and "_line_of" not in line)


# ----------------------------------------------------------------------------- arrival check


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> dist.HashStore:
    """Rank 0 of 2 on an in-memory store; the test writes what rank 1 would."""
    memory = dist.HashStore()
    monkeypatch.setattr(_arrival, "_store", lambda: memory)
    monkeypatch.setattr(dist, "get_rank", lambda *a, **k: 0)
    monkeypatch.setattr(dist, "get_world_size", lambda *a, **k: 2)
    monkeypatch.setattr(_arrival, "_state", {**_arrival._state, "world": None, "generation": 0, "sequence": 0, "exit_hook": True})
    monkeypatch.setattr(_arrival, "VISIBLE_WAIT_S", 0.1)
    return memory


def _rank1_arrives(memory: dist.HashStore, here: str) -> None:
    import zlib

    key = "ddpify/0/0/"
    memory.set(f"{key}at/1", here)
    memory.add(f"{key}site/{zlib.crc32(here.encode())}", 1)
    memory.add(f"{key}count", 1)


def test_a_save_only_rank_0_reaches_is_named_at_once(store: dist.HashStore) -> None:
    _rank1_arrives(store, "the end of ddpify.distributed() at train.py:300")
    started = time.monotonic()
    with pytest.raises(GuardError) as caught:
        _arrival.arrive("ddpify.save", "train.py:212")
    assert str(caught.value) == (
        "ddpify: ranks [1] did not reach ddpify.save at train.py:212 — is it behind a rank test? use torch.save there "
        "(ddpify.save already writes on rank 0 only, and waits for every rank) (ranks [1] reached the end of "
        "ddpify.distributed() at train.py:300 instead)"
    )
    assert caught.value.row == "hang" and time.monotonic() - started < 5


def test_a_rank_that_ended_is_named_and_a_silent_one_times_out(store: dist.HashStore) -> None:
    store.set("ddpify/0/ended/1", "failed (ValueError: bad batch)")
    store.add("ddpify/0/ended", 1)
    with pytest.raises(
        GuardError, match=r"ranks \[1\] did not reach ddpify.barrier at a.py:3 .* \(rank 1 failed \(ValueError: bad batch\)\)"
    ):
        _arrival.arrive("ddpify.barrier", "a.py:3")
    store.delete_key("ddpify/0/ended/1")
    store.add("ddpify/0/ended", -1)
    with pytest.raises(GuardError, match=r"ranks \[1\] did not reach ddpify.save at a.py:9 .*waited 0 s"):
        _arrival.arrive("ddpify.save", "a.py:9", timeout_s=0.3)


def test_the_wait_for_a_slow_rank_is_never_shorter_than_the_groups_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DDPIFY_BARRIER_TIMEOUT", raising=False)
    monkeypatch.setitem(_arrival._state, "timeout", None)
    assert _arrival.barrier_timeout() == 1800
    _arrival.use_group_timeout(7200)  # setup(timeout_s=7200) or DDPIFY_INIT_TIMEOUT=7200
    assert _arrival.barrier_timeout() == 7200
    monkeypatch.setenv("DDPIFY_BARRIER_TIMEOUT", "60")
    assert _arrival.barrier_timeout() == 60


def test_arrival_at_the_same_place_passes(store: dist.HashStore) -> None:
    _rank1_arrives(store, "ddpify.save at train.py:212")
    _arrival.arrive("ddpify.save", "train.py:212")


def _as_rank_1_after_rank_0_wrote(store: dist.HashStore, written: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store.set("ddpify/0/0/seen/writer", written)
    store.add("ddpify/0/0/seen/count", 1)
    _arrival._state["sequence"] = 1  # the save's barrier was the first
    monkeypatch.setattr(dist, "get_rank", lambda *a, **k: 1)


def test_a_checkpoint_another_rank_cannot_see_fails_at_the_save(
    store: dist.HashStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _as_rank_1_after_rank_0_wrote(store, "/scratch/rank0/model.pt", monkeypatch)  # rank 0 wrote it there...
    with pytest.raises(GuardError, match=r"rank 0 wrote /scratch/rank0/model.pt, but ranks \[1\] cannot see it: .*do not share"):
        _arrival.check_visible("/scratch/rank0/model.pt", "ddpify.save", "train.py:40")  # ...and rank 1 is elsewhere


def test_a_name_each_rank_computed_itself_passes_when_rank_0s_file_is_seen(
    store: dist.HashStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A "next free file name" loop: rank 1 ran it after rank 0 wrote ckpt_0.pt, so it names
    ckpt_1.pt, which nobody wrote: a correct program, since rank 0's file is in the shared folder."""
    (tmp_path / "ckpt_0.pt").write_bytes(b"")
    _as_rank_1_after_rank_0_wrote(store, str(tmp_path / "ckpt_0.pt"), monkeypatch)
    _arrival.check_visible(str(tmp_path / "ckpt_1.pt"), "ddpify.save", "train.py:40")


# ----------------------------------------------------------------------------- lazy sharding


def test_a_huge_user_sampler_is_sharded_lazily() -> None:
    sampler = ShardedSampler(RandomSampler(range(100), replacement=True, num_samples=10**10), 2, 1)
    started = time.monotonic()
    first = list(itertools.islice(iter(sampler), 1000))
    assert time.monotonic() - started < 5 and len(first) == 1000 and len(sampler) == 5 * 10**9
    other = list(itertools.islice(iter(ShardedSampler(RandomSampler(range(100), replacement=True, num_samples=10**10), 2, 0)), 1000))
    assert first != other


@pytest.mark.parametrize("length,world", [(0, 2), (1, 4), (5, 3), (9, 2), (8, 4), (10_000, 3)])
def test_lazy_padding_matches_the_eager_definition(length: int, world: int) -> None:
    order = list(range(100, 100 + length))
    total = -(-length // world) * world
    padded = [order[i % length] for i in range(total)] if length else []
    for rank in range(world):
        assert list(_pad_and_shard(iter(order), world, rank)) == padded[rank::world]


def test_guard_module_names_its_call_sites_outside_torch() -> None:
    assert _guard.call_site(0).startswith(f"{HERE}:")

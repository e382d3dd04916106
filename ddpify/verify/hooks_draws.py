"""Recorder hook for the random index draws that pick training batches in scripts without a
sampler: ``torch.randint`` / ``torch.randperm``, numpy.random's and ``random``'s module functions
(``np.random.choice(n, batch)``); the per-rank streams ``ddpify.rank_random`` hands out tell
the recorder themselves (``recorder.note``: the classes stay the libraries' own, which other
code tests with ``isinstance``). Each call from the script's own code once training started is
a ``draw`` event;
``judge_data.draws`` compares them across ranks: the same values everywhere mean every rank
reads the same samples."""

from __future__ import annotations

import functools
import hashlib
import random
from typing import Any

import torch

from ddpify.verify.hooks_data import tensor_digest
from ddpify.verify.recording import Recorder, called_from_torch, user_frame, where

__all__ = ["install"]

MAX_DRAWS_PER_SITE = 20
# Draws that pick indices: numpy.random's and random's functions and their streams' methods.
_NUMPY = ("choice", "randint", "permutation", "random_integers")
_RANDOM = ("sample", "choices", "randrange", "randint")


def install(rec: Recorder) -> None:
    per_site: dict[str, int] = {}

    def record(fn: str, result: Any) -> None:
        if not rec.training or called_from_torch(2):
            return
        try:
            site = where(user_frame(2))
            count = per_site.get(site, 0)
            per_site[site] = count + 1
            if count < MAX_DRAWS_PER_SITE:
                rec.emit("draw", fn=fn, site=site, n=count, digest=_digest(result), size=_size(result))
        except Exception as exc:
            rec.emit("recorder-error", where=fn, message=repr(exc))

    def wrap(fn: str, original: Any) -> Any:
        @functools.wraps(original)
        def draw(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            record(fn, result)
            return result

        return draw

    def streams(original: Any) -> Any:
        @functools.wraps(original)
        def rank_random(module: Any, **kwargs: Any) -> Any:
            stream = original(module, **kwargs)
            return stream if stream is module else _Recorded(stream, f"ddpify.rank_random({module.__name__})", record)

        return rank_random

    for name in ("randint", "randperm"):
        setattr(torch, name, wrap(f"torch.{name}", getattr(torch, name)))
    import ddpify.runtime as runtime  # converted scripts reach it as `ddpify.rank_random(...)`, looked up at each call

    runtime.rank_random = streams(runtime.rank_random)
    for name in _RANDOM:
        setattr(random, name, wrap(f"random.{name}", getattr(random, name)))
    try:
        import numpy
    except ImportError:
        return
    for name in _NUMPY:
        setattr(numpy.random, name, wrap(f"numpy.random.{name}", getattr(numpy.random, name)))


class _Recorded:
    """A per-rank stream whose index draws are recorded; everything else is the stream's."""

    def __init__(self, stream: Any, label: str, record: Any) -> None:
        self._stream, self._label, self._record = stream, label, record

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._stream, name)
        if name not in (*_NUMPY, *_RANDOM) or not callable(found):
            return found

        def draw(*args: Any, **kwargs: Any) -> Any:
            result = found(*args, **kwargs)
            self._record(f"{self._label}.{name}", result)
            return result

        return draw


def _digest(result: Any) -> str:
    if isinstance(result, torch.Tensor):
        return tensor_digest([result])
    values = result.tolist() if hasattr(result, "tolist") else result
    return hashlib.sha1(repr(values).encode()).hexdigest()[:16]


def _size(result: Any) -> int:
    if isinstance(result, torch.Tensor):
        return result.numel()
    try:
        return len(result)
    except TypeError:
        return 1

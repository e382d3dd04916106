"""Check tests keep the result cache out of the developer's home: one fresh cache folder per
test process (``DDPIFY_CACHE_DIR``, inherited by the ``ddpify check`` processes they start)."""

from __future__ import annotations

import os
import shutil
import tempfile

_CREATED: list[str] = []


def pytest_configure(config) -> None:  # type: ignore[no-untyped-def]
    if "DDPIFY_CACHE_DIR" not in os.environ:
        os.environ["DDPIFY_CACHE_DIR"] = tempfile.mkdtemp(prefix="ddpify-test-cache-")
        _CREATED.append(os.environ["DDPIFY_CACHE_DIR"])


def pytest_unconfigure(config) -> None:  # type: ignore[no-untyped-def]
    for folder in _CREATED:
        shutil.rmtree(folder, ignore_errors=True)

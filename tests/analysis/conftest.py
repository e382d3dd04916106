"""Build an ``Analysis`` from source text."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
import pytest

from ddpify.analysis import Analysis
from ddpify.tree.metadata import FastMetadata


def analyse(source: str) -> Analysis:
    return Analysis(FastMetadata(cst.parse_module(source)))


@pytest.fixture
def analysis() -> Callable[[str], Analysis]:
    return analyse

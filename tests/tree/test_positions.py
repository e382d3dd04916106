"""ddpify.tree.positions gives exactly libcst's PositionProvider ranges, for every node."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from ddpify.tree.positions import Positions

ROOT = Path(__file__).resolve().parents[2]

EDGE_CASES = {
    "no trailing newline": "import torch\nx = torch.load('a')",
    "crlf and tabs": "def f(a,\r\n\tb):\r\n\tif a:\r\n\t\treturn (b +\r\n\t\t\t1)\r\n",
    "empty": "",
    "comments and blank lines": "# head\n\n\nclass A:  # trailing\n    # inner\n\n    x = 1\n    # after\n# end\n",
    "decorators and strings": '@d(\n    1)\ndef g():\n    """doc\n    more"""\n    return f"{1 + 2!r}" \\\n        "x"\n',
    "semicolons": "a = 1; b = 2;  c = (3,\n  4)\n",
}


def _sources() -> list[tuple[str, str]]:
    files = sorted((ROOT / "examples").rglob("*.py")) + sorted((ROOT / "tests" / "fixtures").rglob("*.py"))
    read = [(str(p.relative_to(ROOT)), p.read_bytes().decode("utf-8")) for p in files]
    return list(EDGE_CASES.items()) + read


SOURCES = _sources()


@pytest.mark.parametrize("name, source", SOURCES, ids=[name for name, _ in SOURCES])
def test_positions_equal_position_provider(name: str, source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module)
    assert set(positions) == set(expected)
    mismatched = [(type(node).__name__, expected[node], positions[node]) for node in expected if positions[node] != expected[node]]
    assert not mismatched


def test_unknown_node_is_a_key_error() -> None:
    positions = Positions(cst.parse_module("x = 1\n"))
    with pytest.raises(KeyError):
        positions[cst.Name("x")]
    assert cst.Name("x") not in positions

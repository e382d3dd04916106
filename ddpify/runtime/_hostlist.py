"""SLURM's compressed host lists (``node[01-04,07],gpu3``), parsed without ``scontrol``.

The rendezvous address under ``srun`` is the first host of the step's node list; calling
``scontrol show hostnames`` would need SLURM's tools inside the container and a fork per rank.
"""

from __future__ import annotations

__all__ = ["expand_hostlist"]


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets: ``a[1,2],b`` -> ``["a[1,2]", "b"]``."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in host list {text!r}")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise ValueError(f"unbalanced '[' in host list {text!r}")
    parts.append(text[start:])
    return [part for part in parts if part]


def _expand_range(item: str, text: str) -> list[str]:
    """``07`` -> ["07"]; ``01-04`` -> ["01", ..., "04"], keeping the zero padding."""
    low, dash, high = item.partition("-")
    if not low.isdigit() or (dash and not high.isdigit()):
        raise ValueError(f"bad range {item!r} in host list {text!r}")
    if not dash:
        return [low]
    if int(high) < int(low):
        raise ValueError(f"descending range {item!r} in host list {text!r}")
    return [str(n).zfill(len(low)) for n in range(int(low), int(high) + 1)]


def _expand_host(pattern: str, text: str) -> list[str]:
    """One host pattern, possibly with several bracket groups (``r[1-2]n[3,5]``)."""
    open_at = pattern.find("[")
    if open_at < 0:
        return [pattern]
    close_at = pattern.index("]", open_at)
    prefix, body, rest = pattern[:open_at], pattern[open_at + 1 : close_at], pattern[close_at + 1 :]
    suffixes = _expand_host(rest, text)
    hosts: list[str] = []
    for item in body.split(","):
        for number in _expand_range(item.strip(), text):
            hosts.extend(prefix + number + suffix for suffix in suffixes)
    return hosts


def expand_hostlist(text: str) -> list[str]:
    """All hosts of a SLURM host list, in order; ValueError for text that is not one."""
    hosts = [host for pattern in _split_top_level(text.strip()) for host in _expand_host(pattern, text)]
    if not hosts:
        raise ValueError(f"empty host list {text!r}")
    return hosts

"""``input()`` on every rank. Under torchrun only rank 0 is attached to the terminal: the other
ranks read end-of-file (EOFError) or block, and answers typed once could not reach them anyway
-- ranks that took different answers would take different paths through the collectives.

Reported where the training code enters the prompting (the call of this file's prompting
function, ``promptNextAction(model)``, or the ``input()`` itself when the training code prompts),
with the prompts' lines; prompts behind a rank-0 test are left alone."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.file_writes import recording_statement
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, of_types

_MAX_DEPTH = 4
_MAX_ENTRIES = 8  # more places that enter one prompt than a report should list


def report(recording: Recording, facts: Facts) -> None:
    shared = recording.analysis
    prompts = [c for c in shared.source.calls_by_callee.get("input", []) if "builtins.input" in shared.source.qualified(c)]
    entries: dict[int, tuple[cst.Call, list[int]]] = {}
    for prompt in prompts:
        if not shared.context.every_rank(prompt):
            continue
        for entry in _entries(recording, prompt, 0):
            line = recording.line(recording_statement(recording, entry))
            entries.setdefault(line, (entry, []))[1].append(recording.line(prompt))
    for line, (entry, prompt_lines) in sorted(entries.items()):
        lines = sorted(set(prompt_lines))
        where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        via = "" if "builtins.input" in recording.qualified(entry) else f"{code(entry.func)}() prompts with input() ({where}): "
        facts.manual.append(
            ManualItem(
                line,
                f"{via}input() blocks on ranks without a terminal: under torchrun only rank 0 reads the terminal, the other "
                "ranks get EOF (EOFError) or wait, and ranks with different answers would take different paths",
                "read it on rank 0 and broadcast it (answer = [input(prompt) if ddpify.is_main_process() else None]; "
                "torch.distributed.broadcast_object_list(answer, src=0)), or take it as an argument",
            )
        )


def _entries(recording: Recording, node: cst.Call, depth: int, seen: dict[cst.FunctionDef, list[cst.Call]] | None = None) -> list[cst.Call]:
    """Where the script's own flow enters the prompting: ``node`` itself in the function that
    trains, in the script's entry function (called only at module level: ``main``) or at module
    level; else the calls of its function, followed up (``promptNextAction(model)`` in ``main``,
    not ``yesno(...)`` inside ``promptNextAction``). Each function's entries are found once
    (``seen``; a function met again inside a cycle adds none), so the cost stays linear."""
    function = recording.function_of(node)
    if function is None or depth >= _MAX_DEPTH or _trains_itself(function):
        return [node]
    seen = {} if seen is None else seen
    if function in seen:
        return seen[function]
    sites = [s for s in recording.analysis.source.call_sites(function) if recording.function_of(s) is not None]
    if not sites:
        return [node]
    seen[function] = []
    found: dict[cst.Call, None] = {}
    for site in sites:
        found.update(dict.fromkeys(_entries(recording, site, depth + 1, seen)))
        if len(found) > _MAX_ENTRIES:  # entered from all over: the item goes to the prompt itself
            found = {node: None}
            break
    seen[function] = list(found)
    return seen[function]


def _trains_itself(function: cst.FunctionDef) -> bool:
    """A ``.backward()`` in the function's own body (not in a function it calls)."""
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward" for c in of_types(function.body, cst.Call))

"""A trained model, now the DDP wrapper, handed to a function of another file when the model
has members of its own. This file reaches them through ``ddpify.unwrap(model)`` (the
transformer rewrites ``decoder.init_hidden(...)``), but the other file's code is out of reach
(char-rnn's ``generate(decoder, ...)``, which calls ``decoder.init_hidden(1)``): ddpify's guarded
wrapper answers such calls from the model, plain DDP (``DDPIFY_GUARDS=0``) raises AttributeError,
and training through such a member is never averaged.

Reported at the call, naming the members this file uses and what to write; not rewritten:
whether the helper trains through the model (then it needs the wrapper) or only samples (then
``ddpify.unwrap(model)`` is right) is in the other file."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.planners.calls import HARMLESS_CALLS, LOADS_INTO, behind_rank_test, project_helper
from ddpify.convert.planners.file_writes import recording_statement
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import callee_name, code, of_types


def report(recording: Recording, facts: Facts) -> None:
    members = _own_members(recording, facts)
    if not members:
        return
    reported: set[tuple[str, str]] = set()
    for call in recording.reference_calls:
        helper = project_helper(recording, call)
        if helper is None or callee_name(call) in HARMLESS_CALLS or LOADS_INTO.search(helper) or behind_rank_test(recording, call):
            continue
        for arg in call.args:
            model = code(arg.value)
            if model not in members or (helper, model) in reported or arg in facts.unwrapped_args:
                continue
            reported.add((helper, model))
            used = members[model]
            listed = ", ".join(f"{model}.{member} (line {line})" for member, line in list(used.items())[:3])
            first = next(iter(used))
            facts.manual.append(
                ManualItem(
                    recording.line(recording_statement(recording, call)),
                    f"{helper}() (another file) is given {model}, which is now the DDP wrapper; the model has members DDP "
                    f"lacks ({listed}): ddpify's wrapper reads them from the model (guard rails on, the default; with "
                    "DDPIFY_GUARDS=0 they raise AttributeError), and gradients are averaged only through its forward",
                    f"if {helper}() only samples or evaluates, pass ddpify.unwrap({model}); if it trains through {model}, keep "
                    f"the wrapper and train through its forward ({model}(...)), using {model}.{first}(...) only for what needs "
                    "no gradient",
                )
            )


def _own_members(recording: Recording, facts: Facts) -> dict[str, dict[str, int]]:
    """Per trained model, the members of its own this file uses (``decoder.init_hidden``),
    with their first line: what the DDP wrapper does not have."""
    found: dict[str, dict[str, int]] = {}
    imported = {id(a) for statement in of_types(recording.module, cst.Import, cst.ImportFrom) for a in of_types(statement, cst.Attribute)}
    for attribute in of_types(recording.module, cst.Attribute):
        if id(attribute) in imported:
            continue  # `from model.wide_res import WideResNet`: a package named like the model
        model = code(attribute.value)
        member = attribute.attr.value
        if model in facts.model_keys and member not in names.MODULE_API and not member.startswith("__"):
            found.setdefault(model, {}).setdefault(member, recording.line(attribute))
    return found

"""Environments seeded alike on every rank: ``envs.reset(seed=args.seed)``, ``env.seed(seed)``.

Reinforcement-learning scripts make their training data themselves, by running environments.
``ddpify.seed`` sets the library seeds apart per rank once training starts, but an environment
given the script's seed explicitly starts from the same state on every rank: every rank then
collects the same experience, and DDP averages N copies of one rank's gradient (N times the
work, no more data). Reported, not rewritten: offsetting the seed by the rank changes what the
script computes, and where it matters (evaluation episodes) the user decides."""

from __future__ import annotations

import libcst as cst

from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import code, keyword_value, of_types

_ENVIRONMENT_LIBRARIES = ("gym.", "gymnasium.", "gym_", "procgen.", "envpool.", "dm_control.", "pettingzoo.")


def report(recording: Recording, facts: Facts) -> None:
    """Once per file: the first environment seeded with a value that does not depend on the rank."""
    if not recording.analysis.context.divergence.trains(recording.module):
        return  # no training here: the same environments on every rank cost nothing
    for call in recording.analysis.source.of_types(cst.Call):
        assert isinstance(call, cst.Call)
        seed = _environment_seed(recording, call)
        if seed is None or "rank" in code(seed):
            continue
        facts.manual.append(
            ManualItem(
                recording.line(call),
                f"{code(call.func)}(... {code(seed)} ...) seeds the environment alike on every rank: every rank collects "
                "the same experience, so once the model is wrapped DDP averages world_size copies of one rank's gradient "
                "(world_size times the work, no more data)",
                f"give each rank its own seed, e.g. {code(seed)} + ddpify.rank() * 1000 (and the same offset wherever the "
                "environments are seeded), keeping evaluation episodes alike if you compare them across ranks",
            )
        )
        return


def _environment_seed(recording: Recording, call: cst.Call) -> cst.BaseExpression | None:
    """The seed of ``x.reset(seed=s)`` (the Gymnasium API: any object), or of ``x.seed(s)``
    when ``x`` was made by an environment library (``gym.make(...)``)."""
    if not isinstance(call.func, cst.Attribute):
        return None
    method = call.func.attr.value
    if method == "reset":
        return keyword_value(call, "seed")
    if method != "seed" or not call.args or not _made_by_environment_library(recording, call.func.value):
        return None
    return call.args[0].value


def _made_by_environment_library(recording: Recording, value: cst.BaseExpression) -> bool:
    while isinstance(value, cst.Attribute):  # envs.single_action_space -> envs
        value = value.value
    if not isinstance(value, cst.Name):
        return False
    for _, assigned in recording.analysis.source.assignments.get(value.value, []):
        calls = of_types(assigned, cst.Call) if assigned is not None else []
        if any(q.startswith(_ENVIRONMENT_LIBRARIES) for c in calls for q in recording.qualified(c)):
            return True
    return False

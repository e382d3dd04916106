"""Which calls seed a global random number generator, and which project helpers do it for their
caller: ``fix_random_seeds(args.seed)`` in a sibling module seeds torch and NumPy with its
argument, the same on every rank unless the helper adds the rank itself. One definition for the
linter's seed rules and the project summaries."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.project import Seeding

if TYPE_CHECKING:
    from ddpify.analysis.rank_tests import RankTests
    from ddpify.analysis.source import Source

# The seeding functions and the RNG each seeds.
SEEDS = {
    "torch.manual_seed": "torch",
    "torch.random.manual_seed": "torch",
    "torch.cuda.manual_seed": "torch",
    "torch.cuda.manual_seed_all": "torch",
    "random.seed": "random",
    "numpy.random.seed": "numpy",
}


def seeding(source: Source, rank_tests: RankTests, function: cst.FunctionDef) -> Seeding | None:
    """How ``function`` seeds the global RNGs from one of its parameters, unchanged by a rank;
    None when it seeds nothing, or with a value that names a rank (``seed + get_rank()``)."""
    names = [p.name.value for p in function.params.params]
    families: set[str] = set()
    parameter: str | None = None
    for call in source.of_types_in(function, cst.Call):
        seeded = next((SEEDS[q] for q in source.qualified(call) if q in SEEDS), None)
        if seeded is None or not call.args or source.enclosing_function(call) is not function:
            continue
        value = call.args[0].value
        if rank_tests.depends_on_rank(value):
            return None
        if isinstance(value, cst.Name) and value.value in names and parameter in (None, value.value):
            parameter = value.value
            families.add(seeded)
    if parameter is None:
        return None
    return Seeding(frozenset(families), names.index(parameter), parameter)

"""What the converter knows about a script, and how it finds out: one read-only walk records
what is there (``ddpify.convert.record``), then the planners (``ddpify.convert.planners``)
decide which loaders train, which models train, where the epoch loops are and where new
statements belong. The transformer only acts on these facts; the linter judges by them.
"""

from __future__ import annotations

from libcst.metadata import MetadataWrapper

from ddpify.analysis import Analysis
from ddpify.convert import planners
from ddpify.convert.fact_types import Facts, HelperLoader, LoaderFact, LoaderVariable, Role
from ddpify.convert.record import Recorder
from ddpify.tree.metadata import run_visitor

__all__ = ["Facts", "HelperLoader", "LoaderFact", "LoaderVariable", "Role", "collect_facts"]


def collect_facts(
    wrapper: MetadataWrapper,
    analysis: Analysis | None = None,
    *,
    trains_elsewhere: bool = False,
    models_from_caller: bool = False,
    data_from_caller: bool = False,
    companions: frozenset[str] = frozenset(),
) -> Facts:
    """The converter's read-only fact pass over ``wrapper.module``: one walk, then the planners.
    ``analysis``: one already built from ``wrapper`` (the linter's), so the file is analysed once;
    ``trains_elsewhere``: the project modules that train are converted alongside (``Facts.trains_in_modules``);
    ``models_from_caller``: this is such a module, handed DDP models (``Facts.models_from_caller``),
    ``data_from_caller``: and loaders the caller shards at run time (``Facts.data_from_caller``);
    ``companions``: the files of the modules converted alongside (``Facts.companion_files``)."""
    recorder = Recorder()
    run_visitor(wrapper, recorder)
    recording = recorder.recording
    recording.wrapper = wrapper
    if analysis is not None:
        recording.share(analysis)
    picked = recording.analysis.models.optimizers.picked_at_run_time  # optimizers[args.opt](model.parameters())
    chosen = [c for c in recording.analysis.models.optimizers.calls if c not in recording.optimizer_calls and picked(c)]
    if chosen:
        recording.optimizer_calls = sorted([*recording.optimizer_calls, *chosen], key=recording.line)
    facts = Facts(
        analysis_of=lambda: recording.analysis,
        trains_in_modules=trains_elsewhere,
        models_from_caller=models_from_caller,
        data_from_caller=data_from_caller,
        companion_files=companions,
    )
    planners.run(recording, facts)
    return facts

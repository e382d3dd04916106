"""The shared DDP analysis (``ddpify.analysis``) of the script a recording was made from, for
the planners that ask it (rank-uniform decisions, epoch loops, execution contexts).

The planners see a :class:`~ddpify.convert.record.Recording`, not the metadata wrapper; the
recording keeps the wrapper's resolved metadata, which is all an ``Analysis`` reads. One
analysis per recording, built on first use, so the planners that ask share its caches."""

from __future__ import annotations

from typing import Any

from ddpify.analysis import Analysis
from ddpify.convert.record import Recording

_ATTRIBUTE = "_ddpify_analysis"  # kept on the recording: it lives exactly as long as the recording


class _Recorded:
    """What ``ddpify.analysis.source.Source`` reads of a metadata wrapper: the module and the
    providers it resolves, taken from the recording."""

    def __init__(self, recording: Recording) -> None:
        self.module = recording.module
        self._metadata = recording.metadata

    def resolve(self, provider: Any) -> Any:
        return self._metadata[provider]


def analysis(recording: Recording) -> Analysis:
    """The analysis of ``recording``'s module (the nodes are the recording's own)."""
    found = getattr(recording, _ATTRIBUTE, None)
    if not isinstance(found, Analysis) or found.source.module is not recording.module:
        found = Analysis(_Recorded(recording))  # type: ignore[arg-type]
        setattr(recording, _ATTRIBUTE, found)
    return found

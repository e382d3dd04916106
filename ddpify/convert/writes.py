"""Calls that write output (images, figures, exports, CSV and log files, the terminal) which
every rank of a DDP run would now make at once. The recorder keeps the calls that may be such
a write (:func:`is_candidate`, one cheap test per call); the side-effects planner
(``ddpify.convert.planners.side_effects``) decides what becomes of each.
"""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names

# Calls that write a file or the terminal: one process should make them.
WRITERS = {
    "torchvision.utils.save_image": "save_image",
    "matplotlib.pyplot.savefig": "plt.savefig",
    "matplotlib.pyplot.show": "plt.show",
    "torch.onnx.export": "torch.onnx.export",
    "sys.stdout.write": "sys.stdout.write",
    "sys.stdout.flush": "sys.stdout.flush",
}
# Standard-library writers still recognised by their spelling when the head (``sys``) is bound
# nowhere in the file and a star import may have brought it (``from models import *``, whose
# module imports sys): no qualified name to go by there, a documented heuristic.
STAR_IMPORTED_WRITERS = frozenset({"sys.stdout.write", "sys.stdout.flush"})
_STAR_IMPORTED_METHODS = frozenset(w.rsplit(".", 1)[1] for w in STAR_IMPORTED_WRITERS)
# Methods of objects whose type libcst cannot see (a pandas DataFrame, a matplotlib Figure):
# recognised by the method name alone, a documented heuristic.
WRITE_METHODS = frozenset({"to_csv", "savefig"})
CSV_WRITERS = frozenset({"csv.writer", "csv.DictWriter"})
CSV_WRITE_METHODS = frozenset({"writerow", "writerows", "writeheader"})
OPEN = frozenset({"builtins.open"})
# Calls that serialize the model given first: a DDP wrapper there would be pickled or traced.
SERIALIZERS = names.TORCH_SAVE | {"torch.onnx.export"}
_CANDIDATE_NAMES = WRITERS.keys() | OPEN | SERIALIZERS | names.MAKE_DIRECTORY
_CANDIDATE_METHODS = WRITE_METHODS | CSV_WRITE_METHODS | {"mkdir"}


def is_candidate(call: cst.Call, qualified: set[str]) -> bool:
    """Cheap first filter in the recorder's ``visit_Call``: may this call write once-only output?"""
    if qualified & _CANDIDATE_NAMES:
        return True
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value in _CANDIDATE_METHODS or not qualified and call.func.attr.value in _STAR_IMPORTED_METHODS
    # `progress_bar(...)`, or a call of a module-level name of this file (a local output helper)
    return isinstance(call.func, cst.Name) and ("progress" in call.func.value.lower() or call.func.value in qualified)

"""A device choice of Apple's MPS: ``torch.device("mps")``, ``model.to("mps")``.

No process group backend moves MPS tensors, so DDP cannot train there; and a script whose
device choice never names CUDA (``"mps" if mps.is_available() else "cpu"``) leaves every rank's
GPU idle on a CUDA machine. Reported once per file, at the first such choice: which device a
Mac-only script should use under torchrun is the user's call."""

from __future__ import annotations

import libcst as cst

from ddpify.convert import names
from ddpify.convert.fact_types import Facts
from ddpify.convert.record import Recording
from ddpify.findings import ManualItem
from ddpify.tree.cstutil import attribute_name, code


def report(recording: Recording, facts: Facts) -> None:
    for call in recording.write_calls:
        if _names_mps(recording, call):
            facts.manual.append(
                ManualItem(
                    recording.line(call),
                    f"{code(call)} picks Apple's MPS device: DDP cannot train on MPS (no process group backend moves MPS "
                    "tensors), and where this device choice does not name CUDA the ranks do not use the machine's GPUs",
                    "choose the device with ddpify.device() (this rank's GPU under torchrun, else the CPU) wherever the script "
                    "picks one; keep MPS for one-process runs only",
                )
            )
            return


def _names_mps(recording: Recording, call: cst.Call) -> bool:
    """``torch.device("mps")`` or ``x.to("mps")`` (a literal, first positional argument)."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if not positional or not isinstance(positional[0], cst.SimpleString):
        return False
    if not (recording.qualified(call) & names.TORCH_DEVICE or attribute_name(call.func) == "to"):
        return False
    return bool(names.MPS_STRING.match(str(positional[0].evaluated_value)))

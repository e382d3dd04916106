"""A device chosen on the command line: ``parser.add_argument("--device", default="cuda:0")``
then ``torch.device(args.device)`` / ``model.to(args.device)``. Every rank parses the same
command line, so every rank would take the same GPU.

Where the option's value is used as a device -- the argument of ``torch.device(...)``,
``.to(...)``, ``torch.cuda.set_device(...)`` / ``with torch.cuda.device(...)``, a ``device=`` keyword, or the value of a variable
named like a device (``device = args.device``) -- it becomes ``ddpify.device_from(args.device)``:
under a launcher a CUDA device (or GPU index) there is the rank's own GPU, ``cuda:LOCAL_RANK``;
``cpu`` (or any other device) stays what the user asked for, and with one process every value
does. A string built from the option (``f"cuda:{args.gpu}"``) is wrapped whole.

An option read is ``<holder>.<dest>`` where ``dest`` is an option this file declares with a
device-like name (``--device``, ``--gpu``, ``--gpu_id``...), or, in a file whose models are DDP
models, a device-like attribute of a namespace handed in as a parameter (``def main(args):``,
the options parsed by another file), and the holder was assigned
``parse_args()`` (or a call named like it), or is named like one (``args``, ``opt``, ``cfg``,
``self.args``): a documented heuristic, since the parsed namespace has no type to go by.
"""

from __future__ import annotations

import re

import libcst as cst

from ddpify.analysis.distributed_code import SET_DEVICE
from ddpify.convert import names, rewrites_io
from ddpify.convert.fact_types import Facts, NodeRewrite
from ddpify.convert.record import Recording
from ddpify.tree.cstutil import attribute_name, callee_name, code, is_simple_reference, keyword_value, of_types

# A parameter named for the device its values go to (``data_device``, ``device``, ``gpu``).
_HANDED_DEVICE = re.compile(r"(^|_)device$", re.I)
_NOT_A_VALUE = frozenset({"store_true", "store_false", "store_const", "count", "help", "version"})


def plan(recording: Recording, facts: Facts) -> None:
    """``ddpify.device_from(...)`` around each device-option read used as a device, and around
    a ``set_device(...)`` argument that is no rank's own."""
    ddp = facts.wraps_models() or facts.models_from_caller
    options = _device_options(recording)
    if ddp:
        options |= _handed_in_options(recording)
    reads = [read for value in _device_positions(recording) for read in _reads(recording, value, options)] if options else []
    if ddp:
        reads += _pinned_devices(recording)
    for read in reads:
        if read not in facts.node_rewrites and not _already_per_rank(recording, read):
            facts.node_rewrites[read] = NodeRewrite(
                rewrites_io.device_from,
                f"{code(read)} names one device for every rank: ddpify.device_from({code(read)}) is the rank's own GPU "
                "(cuda:LOCAL_RANK) when it names a CUDA device, and what was asked for otherwise (cpu; any device with one process)",
            )


def _pinned_devices(recording: Recording) -> list[cst.BaseExpression]:
    """``torch.cuda.set_device(config.gpus[0])`` / ``with torch.cuda.device(0):`` in a DDP
    script: whatever names the device, from a configuration, a constant or a list, it is one
    GPU for every rank (pt.darts pinned every rank to GPU 0 after ``ddpify.setup()`` had set the
    rank's own). A value computed from a rank (``set_device(args.local_rank)``) is left."""
    rank_tests = recording.analysis.rank_tests
    found = []
    for call in recording.write_calls:
        if not recording.qualified(call) & SET_DEVICE:
            continue
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        value = positional[0] if positional else keyword_value(call, "device")
        if value is not None and not rank_tests.depends_on_rank(value):
            found.append(value)
    return found


def plan_handed_in(recording: Recording, facts: Facts) -> None:
    """A device handed in (glow-pytorch's ``Trainer(..., data_device=...)`` kept as
    ``self.data_device = data_device``, then ``batch[k].to(self.data_device)``) in a file whose
    models are DDP models: it names the device the caller picked for every rank (``"cuda:0"`` from
    a configuration file), while each rank's model is on its own GPU. Where the parameter is
    kept or used as a device it becomes ``ddpify.device_from(data_device)``: the rank's own GPU
    for a CUDA device, the same device otherwise (cpu; every value with one process). Only
    parameters named ``*device`` of functions this file never calls: its own calls hand them a
    device the conversion already made per rank, and an index (``gpu_id``) may be used as one."""
    if not (facts.wraps_models() or facts.models_from_caller):
        return
    source = recording.analysis.source
    for value in _device_positions(recording):
        if not isinstance(value, cst.Name) or not _HANDED_DEVICE.search(value.value) or value in facts.node_rewrites:
            continue
        function = source.enclosing_function(value)
        if function is None or _called_here(recording, function):
            continue  # this file's own calls hand it a device the conversion already made per rank
        params = {p.name.value for p in (*function.params.params, *function.params.kwonly_params)}
        if value.value in params and not _already_per_rank(recording, value):
            facts.node_rewrites[value] = NodeRewrite(
                rewrites_io.device_from,
                f"{value.value} is handed in and names one device for every rank: ddpify.device_from({value.value}) is the "
                "rank's own GPU (cuda:LOCAL_RANK) when it names a CUDA device, and what was asked for otherwise",
            )


def _called_here(recording: Recording, function: cst.FunctionDef) -> bool:
    """This file calls ``function`` (for ``__init__``: builds its class)."""
    source = recording.analysis.source
    owner = source.enclosing_class(function)
    if owner is not None and function.name.value == "__init__":
        return bool(source.calls_by_callee.get(owner.name.value))
    return bool(source.call_sites(function))


def _device_options(recording: Recording) -> set[str]:
    """``dest`` of each ``add_argument`` this file makes for a device: ``--device``, ``--gpu``."""
    found: set[str] = set()
    for call in recording.write_calls:
        if attribute_name(call.func) != "add_argument":
            continue
        action = keyword_value(call, "action")
        if isinstance(action, cst.SimpleString) and action.evaluated_value in _NOT_A_VALUE:
            continue
        kind = keyword_value(call, "type")
        if isinstance(kind, cst.Name) and kind.value == "bool" or keyword_value(call, "nargs") is not None:
            continue
        dest = keyword_value(call, "dest")
        flags = [str(a.value.evaluated_value) for a in call.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
        if isinstance(dest, cst.SimpleString):
            name = str(dest.evaluated_value)
        else:
            long = [f for f in flags if f.startswith("--")] or [f for f in flags if not f.startswith("-")]
            name = long[0].lstrip("-").replace("-", "_") if long else ""
        if names.DEVICE_OPTION.match(name):
            found.add(name)
    return found


def _handed_in_options(recording: Recording) -> set[str]:
    """Device options parsed by another file and handed in with the namespace (unseen20r's
    mir_samplecnn: main.py declares ``--device`` with default ``cuda:0``, train.py's
    ``main(args)`` reads ``torch.device(args.device)``): device-like attributes of a parameter
    named like an options holder. Only in a file whose models are DDP models, where every rank
    would otherwise take that one GPU; ``device_from`` keeps a value already the rank's own."""
    found: set[str] = set()
    for function in (f for functions in recording.analysis.source.functions.values() for f in functions):
        params = {p.name.value for p in (*function.params.params, *function.params.kwonly_params)}
        holders = {p for p in params if names.OPTION_HOLDER.match(p)}
        if not holders:
            continue
        for node in of_types(function.body, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value in holders and names.DEVICE_OPTION.match(node.attr.value):
                found.add(node.attr.value)
    return found


def _device_positions(recording: Recording) -> list[cst.BaseExpression]:
    """Expressions used as a device: ``torch.device(X)``, ``x.to(X)``, ``set_device(X)``,
    ``f(device=X)``, ``device = X``."""
    found: list[cst.BaseExpression] = []
    for call in recording.write_calls:
        qualified = recording.qualified(call)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if qualified & (names.TORCH_DEVICE | SET_DEVICE) and positional:
            found.append(positional[0])
        elif attribute_name(call.func) == "to" and positional and not _is_module(recording, call.func.value):  # type: ignore[attr-defined]
            found.append(positional[0])
        device = keyword_value(call, "device")
        if device is not None:
            found.append(device)
    for variable, values in recording.values.items():
        if names.DEVICE_VARIABLE.match(variable):
            found += values
    for target, _, assign in recording.aliases:
        last = target.rsplit(".", 1)[-1]
        if (names.DEVICE_VARIABLE.match(last) or _HANDED_DEVICE.search(last)) and "." in target:
            found.append(assign.value)
    return found


def _is_module(recording: Recording, node: cst.BaseExpression) -> bool:
    return is_simple_reference(node) and any(q == "torch" or q.startswith("torch.") for q in recording.qualified(node))


def _reads(recording: Recording, value: cst.BaseExpression, options: set[str]) -> list[cst.BaseExpression]:
    """The device values in ``value`` that come from a device option: the read itself, each
    branch of ``a if c else b``, or a string built from the read (``f"cuda:{args.gpu}"``)."""
    if _is_option_read(recording, value, options):
        return [value]
    if isinstance(value, cst.IfExp):
        return _reads(recording, value.body, options) + _reads(recording, value.orelse, options)
    if isinstance(value, (cst.FormattedString, cst.BinaryOperation, cst.ConcatenatedString)) or (
        isinstance(value, cst.Call) and attribute_name(value.func) == "format"
    ):
        text = code(value)
        holders = [n for n in of_types(value, cst.Attribute) if _is_option_read(recording, n, options)]
        if holders and "cuda" in text:
            return [value]
    return []


def _is_option_read(recording: Recording, node: cst.CSTNode, options: set[str]) -> bool:
    """``args.device``: a device option of this file read from the parsed namespace."""
    if not isinstance(node, cst.Attribute) or node.attr.value not in options or not is_simple_reference(node.value):
        return False
    holder = node.value
    last = holder.attr.value if isinstance(holder, cst.Attribute) else holder.value  # type: ignore[attr-defined]
    if names.OPTION_HOLDER.match(last):
        return True
    if isinstance(holder, cst.Name):
        return any(isinstance(v, cst.Call) and (callee_name(v) or "") in names.PARSE_ARGS for v in recording.values_of(holder.value))
    return False


def _already_per_rank(recording: Recording, node: cst.CSTNode) -> bool:
    """Already inside ``ddpify.device_from(...)`` (a converted script)."""
    arg = recording.parent(node)
    call = recording.parent(arg) if isinstance(arg, cst.Arg) else None
    return isinstance(call, cst.Call) and "ddpify.runtime.device_from" in recording.qualified(call)

from __future__ import annotations

import re

import libcst as cst

from ddpify.analysis.context import Process
from ddpify.analysis.loads import maps_location, rng_states_only
from ddpify.analysis.ranks import RankSelection
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.writes import per_rank_path
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import callee_name, code, is_method_call, is_simple_reference, of_types

# Where one process per node (or one in all) loads: cuda:0 is its own GPU, no N copies pile up.
_ONE_PER_GPU0 = frozenset({RankSelection.MAIN, RankSelection.LOCAL_MAIN, RankSelection.NONE})


class LoadWithoutMapLocation(Rule):
    code = "DDP004"
    default = True
    name = "load-without-map-location"
    message = "torch.load without map_location: tensors saved from cuda:0 land on GPU 0 in every process"
    why = (
        "A checkpoint remembers the device its tensors were saved from. Loaded without "
        "`map_location`, every rank puts them on cuda:0, so GPU 0 fills up with N copies and may run "
        'out of memory (pytorch/examples#969). Load to the CPU (`map_location="cpu"`), or to the '
        "process's own GPU. Not reported: a load that runs on one process only (rank 0, once per "
        "node, the process that calls `mp.spawn`, the single-process branch), a file that names the "
        "rank (each rank reads back the file it saved from its own GPU), and a load whose sibling "
        "branch of a test of the device maps while this one deliberately does not (the one-process-per-node branch of "
        "pytorch/examples imagenet, where `args.gpu is None`), and a load of a file this program "
        "saves (the same path expression) from CPU values only (`torch.save(feats.cpu(), path)`, a "
        "dict of `.cpu()` / `.numpy()` values): nothing in it remembers a GPU; nor a learning-rate "
        "scheduler's state (`scheduler.load_state_dict(torch.load(path))` where `scheduler` comes from "
        "`torch.optim.lr_scheduler` or a `get_*_schedule*` helper): numbers, no tensor. A function of the "
        "project's own modules that loads without `map_location` (`load_checkpoint(model, path)` in a sibling "
        "module) is reported where this file calls it on every rank; not one whose load depends on a parameter "
        "its caller chooses (`if use_torch:`); nor a cache of preprocessed data the program fills (loaded where the file exists, "
        "else built without a device or a model and saved to the same path); nor a load whose contents go only "
        "into random-number-state setters (`torch.cuda.set_rng_state(state['cuda'])`, `np.random.set_state`): "
        "RNG states are CPU tensors whatever device saved them (the converter leaves those loads unmapped too: "
        "`set_rng_state` refuses a CUDA tensor), also in a project function, which is not reported either where "
        "it reads a file per rank."
    )
    fix = "safe"
    fix_notes = (
        'The fix adds `map_location="cpu"`. It is safe where the loaded object goes straight into '
        "`load_state_dict(...)`, which copies every tensor onto the parameter's own device; elsewhere "
        "it is unsafe, because code that uses the loaded tensors directly would now get CPU tensors. In a "
        "script that uses ddpify.runtime the fix is the converter's, `map_location=ddpify.device()` (this "
        "rank's device, where a single-GPU script expected its tensors), and safe."
    )
    false_positives = "A load of a file saved from the CPU by another program, or through a path this file spells differently."
    valid = (
        """\
import random

import numpy as np
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
state = torch.load("checkpoint/rng.pt")  # random-number states: CPU tensors and plain objects
torch.random.set_rng_state(state["torch"])
torch.cuda.set_rng_state(state["cuda"])
np.random.set_state(state["numpy"])
random.setstate(state["python"])
""",
        """\
import torch
import torch.distributed as dist
from transformers import get_linear_schedule_with_warmup

dist.init_process_group("nccl")
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=100, num_training_steps=1000)
scheduler.load_state_dict(torch.load("checkpoint/scheduler.pt"))  # step counts and rates only
""",
        """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt", map_location="cpu")
""",
        """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt", {"cuda:0": "cuda:1"})
""",
        """\
import torch
import torch.distributed as dist

if args.gpu is None:  # one process per node drives every GPU: keep the saved devices
    checkpoint = torch.load(args.resume)
else:
    checkpoint = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
""",
        """\
import torch
import torch.distributed as dist

rank = dist.get_rank()
torch.save(queue, f"queue{rank}.pth")  # a file per rank, saved from this rank's GPU
queue = torch.load(f"queue{rank}.pth")
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist

if args.eval_only:  # chooses what to load, not where: every rank loads the full model onto cuda:0
    model = torch.load(args.checkpoint)
else:
    model.load_state_dict(torch.load(args.pretrained, map_location="cpu"))
""",
            """\
import torch
import torch.distributed as dist

if args.eval_only:  # chooses what to load, not where: every rank loads the full model onto cuda:0
    model = torch.load(args.checkpoint, map_location="cpu")
else:
    model.load_state_dict(torch.load(args.pretrained, map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

model.load_state_dict(torch.load("ckpt.pt"))
""",
            """\
import torch
import torch.distributed as dist

model.load_state_dict(torch.load("ckpt.pt", map_location="cpu"))
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt")
""",
            """\
import torch
import torch.distributed as dist

state = torch.load("ckpt.pt", map_location="cpu")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

state = torch.load("ckpt.pt")
""",
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

state = torch.load("ckpt.pt", map_location=ddpify.device())
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        loads = bool(self.qualified(node) & names.TORCH_LOAD)
        helper = None if loads else self.file.analysis.source.project.helper(node)
        if (helper is None or not helper.loads_unmapped) if not loads else maps_location(node):
            return
        context = self.file.analysis.context
        if context.selection(node) in _ONE_PER_GPU0 or context.process(node) is Process.PARENT:
            return
        if not loads:  # `load_checkpoint(model, path)` of a sibling module
            self.report(
                node,
                message=f"{short(node.func)}() (another file) calls torch.load without map_location: tensors saved "
                'from cuda:0 land on GPU 0 in every process (load with `map_location="cpu"` there)',
            )
            return
        if (
            per_rank_path(self, node)
            or rng_states_only(self.file.analysis.source, node)
            or self._sibling_maps(node)
            or self._saved_from_cpu(node)
            or self._into_scheduler(node)
            or self._data_cache(node)
        ):
            return
        if self.file.already_converted:  # the converter's own rewrite: the rank's device
            self.report(node, replacement=rewrites.with_map_location(node), safety="safe")
            return
        fixed = _with_cpu_location(node)
        self.report(node, replacement=fixed, safety="safe" if self._into_load_state_dict(node) else "unsafe")

    def _saved_from_cpu(self, node: cst.Call) -> bool:
        """This program writes the file it loads (the same path expression) and every save of it
        holds CPU tensors only (``torch.save(feats.cpu(), path)``, a dict of ``.cpu()`` values):
        nothing in it remembers a GPU."""
        if not node.args or node.args[0].keyword is not None:
            return False
        path = code(node.args[0].value)
        saves = [
            c
            for c in self.file.analysis.source.calls_by_callee.get("save", [])
            if self.qualified(c) & names.TORCH_SAVE and len(c.args) >= 2 and code(c.args[1].value) == path
        ]
        return bool(saves) and all(self._on_cpu(c.args[0].value, 0) for c in saves)

    def _data_cache(self, node: cst.Call) -> bool:
        """A cache of preprocessed data this program fills: loaded where the file exists (``if
        os.path.exists(cached_file):``), else built and saved to the same path, from calls that
        move nothing to a GPU and run no model (BERT-NER's tokenised features): what the data
        pipeline builds is on the CPU until a batch is moved."""
        if not node.args or node.args[0].keyword is not None:
            return False
        path = code(node.args[0].value)
        branch = next((a for a in self.ancestors(node) if isinstance(a, cst.If)), None)
        if branch is None or path not in code(branch.test) or not _EXISTS.search(code(branch.test)):
            return False
        other = branch.orelse.body if isinstance(branch.orelse, cst.Else) else None
        if other is None or not any(node is c for c in of_types(branch.body, cst.Call)):
            return False
        saves = [
            c
            for c in of_types(other, cst.Call)
            if self.qualified(c) & names.TORCH_SAVE and len(c.args) >= 2 and code(c.args[1].value) == path
        ]
        return bool(saves) and not any(_ON_DEVICE.search(code(c.func)) for c in of_types(other, cst.Call))

    def _on_cpu(self, value: cst.BaseExpression, depth: int) -> bool:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            if value.func.attr.value in _HOST_RESULTS:
                return True
            if value.func.attr.value == "to" and value.args and code(value.args[0].value) in ('"cpu"', "'cpu'"):
                return True
        if isinstance(value, cst.Dict):
            return all(isinstance(e, cst.DictElement) and self._on_cpu(e.value, depth) for e in value.elements)
        if isinstance(value, (cst.List, cst.Tuple)):
            return all(isinstance(e, cst.Element) and self._on_cpu(e.value, depth) for e in value.elements)
        if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
            return True
        if isinstance(value, cst.Name) and depth < 2:
            bindings = self.file.analysis.source.assignments.get(value.value, [])
            return bool(bindings) and all(v is not None and self._on_cpu(v, depth + 1) for _, v in bindings)
        return False

    def _sibling_maps(self, node: cst.Call) -> bool:
        """The other branch of an ``if`` that tests the device (``if args.gpu is None:``) around
        this load loads with a map_location: the unmapped branch keeps the saved devices on
        purpose. Another test (``if args.run_eval_only:``) chooses what to load, not where."""
        child: cst.CSTNode = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return False
            if isinstance(ancestor, cst.If) and _DEVICE_TEST.search(code(ancestor.test)):
                other = ancestor.orelse if child is ancestor.body else ancestor.body if child is ancestor.orelse else None
                if other is not None and any(
                    isinstance(c, cst.Call) and self.qualified(c) & names.TORCH_LOAD and maps_location(c) for c in of_types(other, cst.Call)
                ):
                    return True
            child = ancestor
        return False

    def _into_load_state_dict(self, node: cst.Call) -> bool:
        """``m.load_state_dict(torch.load(p))`` or ``m.load_state_dict(torch.load(p)["model"])``."""
        return self._loaded_into(node) is not None

    def _loaded_into(self, node: cst.Call) -> cst.BaseExpression | None:
        """``m`` of ``m.load_state_dict(torch.load(p))`` (also of ``torch.load(p)["model"]``)."""
        current: cst.CSTNode = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.Subscript) and ancestor.value is current:
                current = ancestor
                continue
            if isinstance(ancestor, cst.Arg):
                current = ancestor
                continue
            if isinstance(ancestor, cst.Call) and is_method_call(ancestor, "load_state_dict") and current in ancestor.args:
                return ancestor.func.value  # type: ignore[attr-defined]
            return None
        return None

    def _into_scheduler(self, node: cst.Call) -> bool:
        """``scheduler.load_state_dict(torch.load(p))`` where every binding of ``scheduler`` makes a
        learning-rate scheduler (``torch.optim.lr_scheduler``, ``get_linear_schedule_with_warmup``):
        its state holds numbers, no tensor remembers a GPU."""
        receiver = self._loaded_into(node)
        if receiver is None or not is_simple_reference(receiver):
            return False
        made = [v for _, v in self.file.analysis.source.assignments.get(code(receiver), [])]
        return bool(made) and all(isinstance(v, cst.Call) and self._makes_scheduler(v) for v in made)

    def _makes_scheduler(self, call: cst.Call) -> bool:
        if any(q.startswith("torch.optim.lr_scheduler.") for q in self.qualified(call)):
            return True
        return bool(_SCHEDULER_MAKER.match(callee_name(call) or ""))


# A test that a file exists, and calls that put data on a GPU or run a model.
_EXISTS = re.compile(r"\b(exists|isfile|is_file)\b")
_ON_DEVICE = re.compile(r"(^|\.)(cuda|to)$|model$|net$", re.I)
# A test that chooses the device a load maps to (``args.gpu is None``, ``device == "cpu"``).
_DEVICE_TEST = re.compile(r"gpu|device|cuda|distributed", re.I)
# Library helpers that make a learning-rate scheduler (transformers' ``get_cosine_schedule_with_warmup``).
_SCHEDULER_MAKER = re.compile(r"^get_\w*schedule\w*$")
# Methods whose result holds no GPU tensor: ``x.cpu()``, ``x.numpy()``, ``x.tolist()``, ``x.item()``.
_HOST_RESULTS = frozenset({"cpu", "numpy", "tolist", "item"})


def _with_cpu_location(call: cst.Call) -> cst.Call:
    location = rewrites.keyword("map_location", cst.SimpleString('"cpu"'))
    return call.with_changes(args=rewrites.appended(call, location))

"""Which objects are trained: the file's optimizer calls and whose parameters they get,
followed through variables, ``append``-built lists, loops over ``named_parameters()``, param
groups and builder functions; the modules given to DDP / DataParallel; and what the file does
not tie to a model (an optimizer built by code defined elsewhere, a backward with none)."""

from __future__ import annotations

import functools
import re

import libcst as cst

from ddpify.analysis.callgraph import binding_site
from ddpify.analysis.modules import WRAPS, is_module_class
from ddpify.analysis.source import Source
from ddpify.analysis.spellings import spelling
from ddpify.analysis.values import Values
from ddpify.tree import cstutil
from ddpify.tree.cstutil import is_simple_reference

_OPTIMIZER = re.compile(
    r"^(Adam\w*|SGD|RMSprop|Adagrad|Adadelta|Adamax|LBFGS|Lion|Lamb|LAMB|NAdam|RAdam|Rprop|ASGD|SparseAdam|Muon|Adafactor)$"
)


class Optimizers:
    """The optimizers and wrap calls of one file (computed on first use)."""

    def __init__(self, values: Values) -> None:
        self.values = values
        self.source = values.source

    def built_elsewhere(self) -> list[str]:
        """``optimizer = build_optimizer(net, cfg)`` from another file, then ``optimizer.step()``:
        an optimizer this file cannot see into, so which model it trains is unknown."""
        found: list[str] = []
        for call, made in self.stepped_elsewhere():
            given = ", ".join(cstutil.code(a.value)[:30] for a in made.args) or "nothing"
            found.append(
                f"{spelling(call.func.value)}.step() at line {self.source.line(call)} steps an optimizer that "  # type: ignore[attr-defined]
                f"{cstutil.code(made.func)}() builds at line {self.source.line(made)}, defined elsewhere: which model it trains is unknown (it is given {given})"
            )
        if not found and not self.calls and not self.wrapped:
            backward = self.source.calls_by_callee.get("backward", [])
            if backward:
                found.append(
                    f"backward() at line {self.source.line(backward[0])}, but no optimizer or wrap in this file says which model trains"
                )
        return list(dict.fromkeys(found))

    def stepped_elsewhere(self) -> list[tuple[cst.Call, cst.Call]]:
        """(``x.step()``, the call of code defined elsewhere that built ``x``) for optimizers
        this file cannot see into (``self.optimizer = model.configure_optimizers(cfg)``)."""
        found: list[tuple[cst.Call, cst.Call]] = []
        optimizers = set(self.calls)
        for call in self.source.calls_by_callee.get("step", []):
            receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
            if not isinstance(receiver, (cst.Name, cst.Attribute)) or spelling(receiver) is None:
                continue  # optimizer.step(), self.optimizer.step()
            for origin in self.values.origins(receiver):
                made = origin.node
                if not (origin.known and isinstance(made, cst.Call)) or made in optimizers or self.values.callees(made):
                    continue
                qualified = self.source.qualified(made.func)
                if any(q.split(".")[0] in ("torch", "builtins", "ddpify") or _OPTIMIZER.match(q.rsplit(".", 1)[-1]) for q in qualified):
                    continue
                if any(o.node in optimizers for a in made.args for o in self.values.origins(a.value)):
                    continue  # a scheduler (or wrapper) of an optimizer this file builds
                found.append((call, made))
        return found

    @functools.cached_property
    def calls(self) -> list[cst.Call]:
        """``torch.optim.*`` (not schedulers), other libraries' Adam/SGD/..., the file's own
        ``torch.optim.Optimizer`` subclasses."""
        own = optimizer_classes(self.source)
        names = {n for n in self.source.calls_by_callee if _OPTIMIZER.match(n)} | own | self._aliases(_OPTIMIZER.match)
        found = []
        for name in names:
            for call in self.source.calls_by_callee.get(name, []):
                qualified = self.source.qualified(call.func)
                if any(q.startswith("torch.optim.") and not q.startswith("torch.optim.lr_scheduler.") for q in qualified):
                    found.append(call)
                elif any(_OPTIMIZER.match(q.rsplit(".", 1)[-1]) or q.rsplit(".", 1)[-1] in own for q in qualified):
                    found.append(call)
        found += [c for c in self.source.of_types(cst.Call) if self.picked_at_run_time(c)]
        found += self.of_project_classes
        return sorted(dict.fromkeys(found), key=self.values.start)

    @functools.cached_property
    def of_project_classes(self) -> list[cst.Call]:
        """``SAM(model.parameters(), SGD, lr=...)``: optimizers of classes of the project's own
        modules (``Helper.optimizer_class``)."""
        own = optimizer_classes(self.source)
        found: list[cst.Call] = []
        for name, calls in self.source.calls_by_callee.items():
            if name[:1].isupper() and name not in own and not _OPTIMIZER.match(name):
                found += [c for c in calls if (h := self.source.project_call(c)) is not None and h.optimizer_class]
        return found

    def picked_at_run_time(self, call: cst.Call) -> bool:
        """The construction of an optimizer whose class the run picks (``_chosen_class``)."""
        return bool(call.args) and self._chosen_class(call.func)

    def _chosen_class(self, func: cst.BaseExpression, *, follow: bool = True) -> bool:
        """An optimizer class picked at run time: ``optimizers[args.opt]`` from a dict of them,
        ``getattr(torch.optim, name)``, ``(SGD if plain else Adam)``, or a variable bound to one
        of those (``opt_class = OPTIMIZERS[name]``). The parameters it is given say which
        model trains, whichever class the run picks."""
        if isinstance(func, cst.Subscript):
            return is_simple_reference(func.value) and any(
                isinstance(value, cst.Dict)
                and value.elements
                and all(isinstance(e, cst.DictElement) and self._optimizer_class(e.value) for e in value.elements)
                for _, value in self.source.assignments.get(cstutil.code(func.value), [])
            )
        if isinstance(func, cst.Call) and "builtins.getattr" in self.source.qualified(func.func) and func.args:
            return any(q == "torch.optim" for q in self.source.qualified(func.args[0].value))
        if isinstance(func, cst.IfExp):
            return all(self._optimizer_class(b) or self._chosen_class(b, follow=False) for b in (func.body, func.orelse))
        if isinstance(func, cst.Name) and follow:
            values = [v for _, v in self.source.assignments.get(func.value, [])]
            return bool(values) and all(v is not None and self._chosen_class(v, follow=False) for v in values)
        if isinstance(func, cst.Attribute) and follow:  # self.opt.optimizer, set as opt.optimizer = OPTIMIZERS[...]
            values = [v for _, v in self.source.attribute_assignments(func.attr.value)]
            return bool(values) and all(v is not None and self._chosen_class(v, follow=False) for v in values)
        return False

    def _optimizer_class(self, expression: cst.BaseExpression) -> bool:
        qualified = self.source.qualified(expression)
        return any(q.startswith("torch.optim.") and not q.startswith("torch.optim.lr_scheduler.") for q in qualified) or any(
            _OPTIMIZER.match(q.rsplit(".", 1)[-1]) for q in qualified
        )

    def _aliases(self, accept) -> set[str]:
        """Local names of ``import X as Y`` whose ``X`` ends in a name ``accept`` takes."""
        found = set()
        for alias in self.source.of_types(cst.ImportAlias):
            if alias.asname is not None and accept(cstutil.code(alias.name).rsplit(".", 1)[-1]):
                found.add(cstutil.code(alias.asname.name))
        return found

    @functools.cached_property
    def wrapped(self) -> list[cst.BaseExpression]:
        """The modules given to DDP / DataParallel / ``ddpify.prepare_model``."""
        tails = {"DistributedDataParallel", "DataParallel", "FullyShardedDataParallel", "prepare_model"}
        names = tails | self._aliases(lambda n: n in tails)
        found = []
        for name in names:
            for call in self.source.calls_by_callee.get(name, []):
                if self.source.qualified(call.func) & WRAPS:
                    argument = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "module"), None)
                    if argument is not None:
                        found.append(argument)
        return sorted(found, key=self.values.start)

    def owners(self, optimizer: cst.Call) -> list[tuple[cst.BaseExpression, tuple[str, ...]]]:
        """Whose ``.parameters()`` the optimizer gets, followed through variables, lists built
        by ``append``, loops over ``named_parameters()`` and param-group dicts; and the modules
        whose own parameters it is handed by name (``[model.weight]``)."""
        given = next((a.value for a in optimizer.args if a.keyword is None or a.keyword.value == "params"), None)
        pending = [given] if given is not None else []
        found: list[tuple[cst.BaseExpression, tuple[str, ...]]] = []
        seen: set[cst.CSTNode] = set()
        while pending and len(seen) < 200:
            expression = pending.pop()
            for call in cstutil.of_types(expression, cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                    owner = self._split(func.value)
                    if all(owner[0] is not f[0] for f in found):
                        found.append(owner)
            for element in cstutil.of_types(expression, cst.Element):  # [model.weight], [net[0].bias, ...]
                listed = self._listed_owner(element.value)
                if listed is not None and all(listed[0] is not f[0] for f in found):
                    found.append(listed)
            for name in cstutil.of_types(expression, cst.Name):
                parent = self.source.parent(name)
                if isinstance(parent, cst.Attribute) or name in seen:
                    continue
                seen.add(name)
                for store in self.values.stores_reaching(name):
                    site = binding_site(self.source, store)
                    if isinstance(site, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and site.value is not None:
                        pending.append(site.value)
                    elif isinstance(site, (cst.For, cst.CompFor)):
                        pending.append(site.iter)
                for read in self.values.variable_reads(name):
                    holder = self.source.parent(read)
                    grows = self.source.parent(holder) if isinstance(holder, cst.Attribute) else None
                    if isinstance(grows, cst.Call) and holder.attr.value in ("append", "extend", "add", "insert"):  # type: ignore[union-attr]
                        pending += [a.value for a in grows.args]
        return found

    def _listed_owner(self, held: cst.BaseExpression) -> tuple[cst.BaseExpression, tuple[str, ...]] | None:
        """The module a parameter listed by name belongs to (``model.fc.weight`` -> ``model``,
        ("fc",); ``model[0].weight`` -> ``model``): one the file calls, or holds a part of."""
        if not isinstance(held, cst.Attribute):
            return None
        holder: cst.BaseExpression = held.value
        crossed = False  # a subscript between: `model[0]` is no name a wrap can take
        while isinstance(holder, (cst.Attribute, cst.Subscript)) and cstutil.code(holder) not in self._called_modules:
            crossed = crossed or isinstance(holder, cst.Subscript)
            holder = holder.value
        if cstutil.code(holder) not in self._called_modules:
            return None
        return self._split(holder if crossed else held.value)

    @functools.cached_property
    def _called_modules(self) -> set[str]:
        """What the file calls as a function (``model(x)``, ``self.net(x)``): a parameter listed
        as ``model.weight`` belongs to a module when its holder is called so (``self.log_alpha``
        of an agent is not)."""
        return {cstutil.code(c.func) for c in self.source.of_types(cst.Call) if is_simple_reference(c.func)}

    def _split(self, receiver: cst.BaseExpression) -> tuple[cst.BaseExpression, tuple[str, ...]]:
        """``model.backbone`` -> (``model``, ("backbone",)); ``self.model`` of a trainer stays
        whole (an attribute of a class that is not a module holds a model)."""
        parts: list[str] = []
        while isinstance(receiver, cst.Attribute):
            owner = self.values.attribute_owner(receiver)
            if owner is not None and not is_module_class(self.values, owner):
                break
            parts.append(receiver.attr.value)
            receiver = receiver.value
        return receiver, tuple(reversed(parts))


def optimizer_classes(source: Source) -> set[str]:
    """The module's own ``torch.optim.Optimizer`` subclasses (SAM, LARS), by name."""
    return {
        klass.name.value
        for klass in source.of_types(cst.ClassDef)
        if isinstance(klass, cst.ClassDef) and any(q.startswith("torch.optim.") for b in klass.bases for q in source.qualified(b.value))
    }

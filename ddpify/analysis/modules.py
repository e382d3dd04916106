"""The ``nn.Module`` classes of the file: which classes are modules, which submodules their
``__init__`` registers, and which of those their ``forward`` never reaches (DDP then waits
for gradients those parameters never get, unless ``find_unused_parameters=True``)."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.callgraph import CallGraph, binding_site

MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Reaching submodules without naming them: nothing can be said about which ones are used.
_DYNAMIC = frozenset({"modules", "children", "named_children", "named_modules", "_modules", "__dict__"})


def is_module_class(graph: CallGraph, klass: cst.ClassDef, depth: int = 0) -> bool:
    """Whether ``klass`` derives from ``nn.Module`` (directly or through the file's classes)."""
    for base in klass.bases:
        for qualified in graph.source.qualified(base.value):
            parent = graph.definitions.get(qualified)
            if qualified in MODULE_BASES or (isinstance(parent, cst.ClassDef) and depth < 8 and is_module_class(graph, parent, depth + 1)):
                return True
    return False


def registers(graph: CallGraph, site: cst.CSTNode | None) -> bool:
    """``self.fc = nn.Linear(...)``, ``= nn.Parameter(...)``, ``= Block()`` (a module class of the
    file), ``= torchvision.models.resnet18()``: the assignment registers a submodule."""
    value = site.value if isinstance(site, cst.Assign) else None
    if not isinstance(value, cst.Call):
        return False
    klass = graph.class_called(value)
    if klass is not None:
        return is_module_class(graph, klass)
    return any(
        (q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and ".functional." not in q)
        or q.startswith("torchvision.models.")
        for q in graph.source.qualified(value.func)
    )


def unused_submodules(graph: CallGraph, klass: cst.ClassDef) -> tuple[str, ...]:
    """Submodules ``klass.__init__`` registers that neither ``forward`` nor the methods it calls
    read (a read in ``__init__`` itself, ``nn.Sequential(self.a)``, counts as a use). Empty
    when ``forward`` or ``__init__`` is not the class's own, or when ``forward`` reaches its
    submodules dynamically (``self.children()``, ``getattr(self, ...)``)."""
    source = graph.source
    own = {s.name.value: s for s in klass.body.body if isinstance(s, cst.FunctionDef)}
    init, forward = own.get("__init__"), own.get("forward")
    if init is None or forward is None:
        return ()
    reached, pending = {forward}, [forward]
    while pending:
        method = pending.pop()
        for call in graph.own(method, cst.Call):
            func = call.func  # type: ignore[attr-defined]
            if isinstance(func, cst.Name) and func.value in ("getattr", "vars"):
                return ()
            for callee, implicit in graph.callees(call):  # type: ignore[arg-type]
                if implicit and source.enclosing_class(callee) is klass and callee not in reached:
                    reached.add(callee)
                    pending.append(callee)
    unused: list[str] = []
    for attribute, (stores, reads) in graph.attributes(klass).items():
        if attribute in _DYNAMIC and any(m in reached for _, m in reads):
            return ()
        registered = any(m is init and registers(graph, binding_site(source, s)) for s, m in stores)
        if registered and not any(m in reached or m is init for _, m in reads):
            unused.append(attribute)
    return tuple(unused)

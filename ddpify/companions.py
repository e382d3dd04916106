"""Training that lives in the project's own modules: a script that trains nothing itself but
builds a class or calls a function of a sibling module that does (``trainer = Trainer(loader,
config); trainer.train()`` with ``Trainer`` in ``trainer.py``) is converted by converting that
module, into ``trainer_ddp.py`` beside it, and pointing the script's import at it.

Decisions, and why:
- Only when the script itself runs no training loop. A script with its own loop that calls a
  module's ``train_one_epoch(model, loader, ...)`` is converted where the model and the loader
  are (the module's backward then runs on the wrapped model); converting the module as well
  would change code that already works. A script that builds the model, its optimizer and
  the data and hands them all to a trainer class that runs the loop and writes (Conv-TasNet's
  ``Solver(data, model, optimizer, args).train()``) gets that module converted alongside:
  the script wraps and shards, the module's saves and prints happen once
  (``ConversionResult.wraps_for_modules``).
- Two modules deep too: a script's class whose module imports the project's trainers (Deep-SVDD)
  gets the trainers and that module converted, the module's imports pointed at the converted
  trainers. Deeper chains are not followed (``training_modules``' ``depth``).
- The module is written next to the original under ``<name>_ddp.py``, so its own imports (its
  siblings, its package) resolve exactly as before, and the original stays untouched: a
  conversion never rewrites an input it was not asked to. The script's output must sit next
  to the script for the same reason (its import must find the new module); otherwise the
  report says what to run.
- A ``<name>_ddp.py`` that exists and is not a ddpify conversion is never overwritten.
- The script itself is converted as well (``convert_source(..., trains_elsewhere=True)``):
  its process group, prints, seeds and writes, as for any script whose training is DDP's.
- Converting the converted script again changes nothing: it is a converted script, and its
  import names the converted module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from ddpify import standalone
from ddpify.analysis import project_files, summarise
from ddpify.analysis.project import module_helpers
from ddpify.findings import Change, ConversionResult, ManualItem
from ddpify.tree.cstutil import code

SUFFIX = "_ddp"


@dataclass(frozen=True)
class TrainingModule:
    """A project module the script runs training code of: ``file`` (``trainer.py``), the
    dotted name the script imports it by (``trainer``, ``..models.trainer``), and what of it
    trains (``Trainer.train()``). ``inner``: for a module that trains through trainer modules
    of its own (Deep-SVDD's ``DeepSVDD.train`` building an ``optim.DeepSVDDTrainer``), those;
    all are converted alongside, and this module's imports of them redirected."""

    file: Path
    module: str
    trains: str
    inner: tuple[TrainingModule, ...] = ()

    @property
    def output(self) -> Path:
        return self.file.with_name(f"{self.file.stem}{SUFFIX}.py")


def is_conversion(file: Path) -> bool:
    """``file`` is a script ddpify wrote (it imports ddpify's runtime, or embeds it)."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return file.is_file() and ("import ddpify.runtime as ddpify" in text or standalone.is_standalone(text))


def training_modules(text: str, path: Path, depth: int = 2) -> list[TrainingModule]:
    """The modules of the script's own project that hold the training the script runs: an
    imported function that calls ``backward``/an optimizer step, or an imported class with a
    method that does (``ddpify.analysis.project``'s ``Helper.trains``); or, ``depth`` modules
    deep, an imported class or function of a module that itself imports such modules (the
    script's ``DeepSVDD`` whose methods run ``optim``'s trainers)."""
    found: dict[Path, TrainingModule] = {}
    for item in project_files.imports(text):
        target = project_files.module_file(item.module, item.level, path)
        if target is None:
            continue
        name, module = item.name, item.module
        inner = project_files.submodule(target, item.name) if item.name is not None else None
        if inner is not None and item.name is not None:  # `from models import trainer`
            target, name, module = inner, None, f"{item.module}.{item.name}" if item.module else item.name
        if target.name == "__init__.py" or target.stem.endswith(SUFFIX) or target in found or (item.name is None and "." in module):
            continue  # `import models.trainer` binds `models`: no alias can point it elsewhere
        helpers = module_helpers(target, project_files.DEPTH, summarise)
        trained = [key for key, helper in helpers.items() if helper.trains and (name is None or key == name or key.startswith(f"{name}."))]
        if trained:
            found[target] = TrainingModule(target, "." * item.level + module, _training_code(trained))
        elif depth > 1 and name is not None and (name in helpers or f"{name}.__init__" in helpers):
            deeper = _inner_training_modules(target, depth - 1)
            if deeper:
                what = f"{name}, through {' and '.join(f'{m.trains} of {m.file.name}' for m in deeper)}"
                found[target] = TrainingModule(target, "." * item.level + module, what, deeper)
    return list(found.values())


def _inner_training_modules(module: Path, depth: int) -> tuple[TrainingModule, ...]:
    """The training modules a module of the project imports itself (none for one that cannot
    be read)."""
    try:
        text = module.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    return tuple(m for m in training_modules(text, module, depth) if not m.inner)


def _training_code(trained: list[str]) -> str:
    """``Trainer.train()``; or, when several of the module's functions or classes train (an
    algorithm chosen by name at run time), which ones, none singled out."""
    classes = sorted(dict.fromkeys(name.split(".")[0] for name in trained))
    if len(classes) == 1:  # the script calls a public method (`train`), not the steps it runs (`_reset_grad`)
        public = [name for name in trained if not name.rpartition(".")[2].startswith("_")]
        return f"{(public or trained)[0]}()"
    listed = ", ".join(classes[:4]) + (f" and {len(classes) - 4} more" if len(classes) > 4 else "")
    return f"whichever of its {len(classes)} training classes or functions the run uses ({listed})"


def redirected(result: ConversionResult, modules: list[TrainingModule]) -> ConversionResult:
    """The script's result with each import of ``modules`` reading the converted module
    instead (``from trainer import Trainer`` -> ``from trainer_ddp import Trainer``; ``import
    trainer`` -> ``import trainer_ddp as trainer``), one report line per import."""
    rewriter = _Redirect({m.module: m for m in modules}, rewrite=True)
    output = cst.MetadataWrapper(cst.parse_module(result.output), unsafe_skip_copy=True).visit(rewriter).code
    return ConversionResult(result.source, output, (*result.changes, *sorted(rewriter.changes)), result.manual)


def advised(result: ConversionResult, modules: list[TrainingModule], command: str) -> ConversionResult:
    """The script's result with an item at each import of ``modules`` when the converted module
    cannot be written where the script's output would import it (stdout, --diff, another
    folder): ``command`` is what converts both."""
    finder = _Redirect({m.module: m for m in modules}, rewrite=False)
    cst.MetadataWrapper(cst.parse_module(result.output), unsafe_skip_copy=True).visit(finder)
    items = [
        ManualItem(
            change.line,
            f"training is done by {module.trains} of {module.file.name}, which is converted only when the result is written "
            "next to this script (its import must find the converted module)",
            f"run `{command}`: {module.file.name} is then converted alongside into {module.output.name}",
        )
        for change, module in finder.found
    ]
    return ConversionResult(result.source, result.output, result.changes, (*result.manual, *items))


class _Redirect(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, renames: dict[str, TrainingModule], *, rewrite: bool) -> None:
        super().__init__()
        self.renames = renames
        self.rewrite = rewrite
        self.found: list[tuple[Change, TrainingModule]] = []

    @property
    def changes(self) -> list[Change]:
        return [change for change, _ in self.found]

    def _note(self, node: cst.CSTNode, module: TrainingModule) -> None:
        line = self.get_metadata(cst.metadata.PositionProvider, node).start.line
        what = (
            f"training is done by {module.trains} of {module.file.name}: converted alongside into {module.output.name} "
            "(its report follows), and this import now reads it"
        )
        self.found.append((Change(line, what), module))

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        dots = "." * len(original_node.relative)
        name = code(original_node.module) if original_node.module is not None else ""
        module = self.renames.get(dots + name)
        if module is not None and original_node.module is not None:
            self._note(original_node, module)
            if not self.rewrite:
                return updated_node
            return updated_node.with_changes(module=cst.parse_expression(f"{name}{SUFFIX}"))
        if isinstance(original_node.names, cst.ImportStar):
            return updated_node
        prefix = f"{dots}{name}." if name else dots
        return updated_node.with_changes(names=[self._alias(original_node, alias, prefix) for alias in original_node.names])

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        return updated_node.with_changes(names=[self._alias(original_node, alias, "") for alias in updated_node.names])

    def _alias(self, statement: cst.CSTNode, alias: cst.ImportAlias, prefix: str) -> cst.ImportAlias:
        """``trainer`` -> ``trainer_ddp as trainer`` when ``prefix + trainer`` is converted
        (``import trainer``; ``from models import trainer``, prefix ``models.``)."""
        module = self.renames.get(f"{prefix}{code(alias.name)}")
        if module is None:
            return alias
        self._note(statement, module)
        if not self.rewrite:
            return alias
        bound = alias.asname or cst.AsName(name=cst.Name(code(alias.name)))
        return alias.with_changes(name=cst.Name(f"{code(alias.name)}{SUFFIX}"), asname=bound)

"""The converter's Python API. The CLI is a thin layer over :func:`convert_source`."""

from __future__ import annotations

import dataclasses

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from ddpify import standalone as embedding
from ddpify.analysis import Analysis, star_imports
from ddpify.analysis.budget import Exhausted
from ddpify.convert import names, rewrites
from ddpify.convert.facts import collect_facts
from ddpify.convert.transformer import ConvertTransformer
from ddpify.errors import DdpifyError, InternalError, syntax_error
from ddpify.findings import ConversionResult, ManualItem
from ddpify.tree import cstutil
from ddpify.tree.metadata import FastMetadata


def convert_source(
    source: str,
    *,
    per_process_batch: bool = False,
    filename: str = "<string>",
    standalone: bool = False,
    annotate: bool = False,
    trains_elsewhere: bool = False,
    models_from_caller: bool = False,
    data_from_caller: bool = False,
    companions: frozenset[str] = frozenset(),
) -> ConversionResult:
    """Rewrite a single-GPU training script for DDP.

    A script with no training code (no DataLoader, no optimizer, no model handed to another
    file's trainer) comes back unchanged, byte for byte. Raises :class:`DdpifyError` for input that does not parse. ``standalone`` embeds
    the runtime helpers the output uses instead of importing ddpify; input that already
    carries such a block stays standalone (see :mod:`ddpify.standalone`). ``annotate`` puts each
    item that needs a human above its statement as a ``# ddpify:`` comment. ``trains_elsewhere``:
    the script's training is done by modules converted alongside it (``ddpify.companions``), so
    a script with no training code of its own is converted all the same (its process group,
    prints, seeds and writes). ``models_from_caller``: this is a module converted alongside a
    script that wraps the models it hands to it (``Facts.models_from_caller``);
    ``data_from_caller``: and that shards, at run time, the loaders it hands to it
    (``Facts.data_from_caller``). ``companions``: the (resolved) files of the modules converted
    alongside: their code saves and writes on rank 0 itself once converted, so calls into them
    are not guarded here (``Facts.companion_files``).
    """
    if standalone or embedding.is_standalone(source):
        plain = convert_source(
            embedding.unembed(source),
            per_process_batch=per_process_batch,
            filename=filename,
            annotate=annotate,
            trains_elsewhere=trains_elsewhere,
            models_from_caller=models_from_caller,
            data_from_caller=data_from_caller,
            companions=companions,
        )
        return dataclasses.replace(plain, source=source, output=embedding.embed(plain.output))
    module = parse(source, filename)  # refuse broken input even when there is nothing to do
    if not trains_elsewhere and not names.may_have_training_code(source):  # no metadata pass for library code
        return ConversionResult(source, source)
    wrapper = FastMetadata(module, star_imports.resolver(filename))
    try:
        facts = collect_facts(
            wrapper,
            Analysis(wrapper, filename),
            trains_elsewhere=trains_elsewhere,
            models_from_caller=models_from_caller,
            data_from_caller=data_from_caller,
            companions=companions,
        )  # the project's modules beside it are read
        if not facts.has_training_code and not facts.trained_elsewhere and not trains_elsewhere:
            return ConversionResult(source, source, already_converted=facts.already_converted)
        _refuse_distributed(wrapper, filename)
        transformer = ConvertTransformer(facts, facts.analysis, per_process_batch=per_process_batch, annotate=annotate)
        converted = wrapper.visit(transformer)
        if converted.code != source:
            converted = rewrites.with_runtime_import(converted)
        output = converted.code
    except Exhausted as exhausted:
        return _unanalysed(source, exhausted)
    except RecursionError:
        raise DdpifyError(f"{filename}: nested too deeply for the rewriter (recursion limit); nothing written") from None
    try:  # never hand out code that does not parse
        cst.parse_module(output)
    except cst.ParserSyntaxError as exc:
        raise InternalError(
            f"{filename}: the converted code would not parse ({exc.message}); nothing written. This is a ddpify bug"
        ) from None
    return ConversionResult(
        source=source,
        output=output,
        changes=tuple(sorted(set(transformer.changes))),
        manual=tuple(sorted(set(transformer.manual))),
        already_converted=facts.already_converted,
        trained_elsewhere=bool(facts.trained_elsewhere),
        wraps_for_modules=bool(facts.wrapped_for_modules),
        trains_here=bool(facts.trained) or facts.wraps_models(),
        shards_at_run_time=any(f.role == "decided" for f in facts.loaders.values()) or any(h.decided for h in facts.helper_loaders),
    )


def _unanalysed(source: str, exhausted: Exhausted) -> ConversionResult:
    """The conservative answer when the analysis spent its budget: the script unchanged, and
    a report item that says so (a rewrite from a half-finished analysis would be a guess)."""
    item = ManualItem(
        1,
        f"not converted: {exhausted}",
        "make the DDP changes by hand, or convert again with DDPIFY_ANALYSIS_BUDGET set above that number of steps",
    )
    return ConversionResult(source, source, manual=(item,))


def _refuse_distributed(wrapper: FastMetadata, filename: str) -> None:
    """A script that already sets up DDP itself (``init_process_group``, a
    ``DistributedDataParallel`` wrap) is not converted again: a second process group would
    crash every rank. ``ddpify check`` is the tool for such scripts."""
    qualified = wrapper.resolve(QualifiedNameProvider)
    positions = wrapper.resolve(PositionProvider)
    for call in cstutil.of_types(wrapper.module, cst.Call):
        found = {q.name for q in qualified.get(call, ())} & (names.INIT_PROCESS_GROUP | names.DDP_CLASSES)
        if found:
            what = "init_process_group" if found & names.INIT_PROCESS_GROUP else "DistributedDataParallel"
            raise DdpifyError(
                f"{filename}:{positions[call].start.line}: already a distributed script ({what}): converting it again would set "
                f"DDP up twice; lint it with `ddpify check {filename}` instead"
            )


def parse(source: str, filename: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise syntax_error(source, filename, exc) from None

"""``ddpify SRC...`` (``ddpify convert SRC...``): options, where each result goes, exit codes.
The conversion itself is ``ddpify.api``; notebooks are ``ddpify.notebook``.

Every input is read, converted and its report built before anything is written, and a write
is atomic (``source_io.write_atomically``): an input that fails leaves nothing behind, and with
several inputs the others are still written.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from ddpify.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, DdpifyError, reader_left

if TYPE_CHECKING:  # pathlib and the rest are imported by the command, not for --help / --version
    from collections.abc import Callable
    from pathlib import Path

    from ddpify.companions import TrainingModule
    from ddpify.findings import ConversionResult
    from ddpify.notebook import NotebookScript
    from ddpify.source_io import SourceFile

EXIT_CODES_HELP = (
    "Exit codes: 0 done, 1 findings (check) or a failed property (verify), 2 bad input or usage, 3 internal error (a ddpify bug), "
    "130 interrupted (Ctrl-C). A file that fails is never written, nor half-written; with several "
    "inputs the others still are."
)
CONVERT_HELP = (
    "Convert SRC (a .py script, a .ipynb notebook's code cells, or - for stdin) for DistributedDataParallel. "
    "Several SRC need --out-dir, --in-place or --diff."
)


@dataclass(frozen=True)
class _Options:
    in_place: bool
    show_diff: bool
    per_process_batch: bool
    standalone: bool
    annotate: bool
    quiet: bool


@click.command(help=CONVERT_HELP, short_help=CONVERT_HELP, epilog=EXIT_CODES_HELP)
@click.argument("sources", nargs=-1, required=True, metavar="SRC...")
@click.option(
    "-o",
    "--output",
    metavar="OUT",
    help="Write the result to OUT, a regular file or a new path (- is stdout, the default); "
    "OUT.ipynb writes a notebook that writes the script and launches it with torchrun.",
)
@click.option("--out-dir", metavar="DIR", help="Write each result into DIR (created if missing) under its input's name.")
@click.option("--in-place", is_flag=True, help="Rewrite each SRC itself.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff and write nothing.")
@click.option(
    "--per-process-batch",
    is_flag=True,
    help="Keep each loader's batch size per process (effective batch x world size) instead of splitting the global batch.",
)
@click.option("--standalone", is_flag=True, help="Embed the runtime helpers the result uses, so it needs only torch (no ddpify).")
@click.option("--annotate", is_flag=True, help="Also write each item that needs a human as a '# ddpify:' comment above its line.")
@click.option("-q", "--quiet", is_flag=True, help="No report on stderr.")
def convert(
    sources: tuple[str, ...],
    output: str | None,
    out_dir: str | None,
    in_place: bool,
    show_diff: bool,
    per_process_batch: bool,
    standalone: bool,
    annotate: bool,
    quiet: bool,
) -> None:
    options = _Options(in_place, show_diff, per_process_batch, standalone, annotate, quiet)
    try:
        jobs = _plan(sources, output, out_dir, options)
    except DdpifyError as error:
        click.echo(f"ddpify: error: {error}", err=True)
        sys.exit(error.exit_code)
    failed: list[str] = []
    code = 0
    for source, destination in jobs:
        outcome = _convert_reporting_errors(source, destination, options)
        if outcome:
            failed.append(source)
            code = max(code, outcome)
    if failed and len(jobs) > 1:
        done = "diffed" if show_diff else "written"
        click.echo(
            f"ddpify: error: {len(failed)} of {len(jobs)} inputs not converted ({', '.join(failed)}); "
            f"the other {len(jobs) - len(failed)} {done}",
            err=True,
        )
    sys.exit(code)


def _plan(sources: tuple[str, ...], output: str | None, out_dir: str | None, options: _Options) -> list[tuple[str, Path | None]]:
    """Each input with its output file (None: stdout, the input itself, or nothing with --diff);
    every usage error before any work."""
    from pathlib import Path

    several = len(sources) > 1
    if options.in_place and (output is not None or out_dir is not None or "-" in sources):
        raise DdpifyError("--in-place rewrites SRC itself: it cannot be combined with -o, --out-dir or stdin")
    if options.show_diff and (output is not None or out_dir is not None or options.in_place):
        raise DdpifyError("--diff writes nothing: it cannot be combined with -o, --out-dir or --in-place")
    if output is not None and out_dir is not None:
        raise DdpifyError("-o names one output file, --out-dir a folder for several: give one of them")
    if several and "-" in sources:
        raise DdpifyError("- (stdin) is converted alone, not with other inputs")
    if several and output is not None:
        raise DdpifyError(f"-o names one output file but {len(sources)} inputs were given: use --out-dir DIR")
    if several and not (out_dir or options.in_place or options.show_diff):
        raise DdpifyError(f"{len(sources)} inputs need --out-dir DIR, --in-place or --diff (stdout takes one result)")
    if out_dir is None:
        return [(source, Path(output) if output not in (None, "-") else None) for source in sources]
    folder = Path(out_dir)
    if "-" in sources:
        raise DdpifyError("--out-dir names outputs after their inputs: stdin has no name, use -o")
    targets = [folder / Path(source).name for source in sources]
    seen: dict[Path, str] = {}
    for source, target in zip(sources, targets, strict=True):
        if target in seen:
            raise DdpifyError(f"{seen[target]} and {source} would both be written to {target}")
        seen[target] = source
    if folder.exists() and not folder.is_dir():
        raise DdpifyError(f"{folder}: --out-dir is not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DdpifyError(f"{folder}: cannot create the output directory: {exc.strerror}") from None
    return list(zip(sources, targets, strict=True))


def _convert_reporting_errors(source: str, destination: Path | None, options: _Options) -> int:
    """Convert one input; its exit code (0 when done), having printed any error as one line."""
    try:
        _convert_one(source, destination, options)
    except DdpifyError as error:
        click.echo(f"ddpify: error: {error}", err=True)
        return error.exit_code
    except BrokenPipeError:
        reader_left()
    except RecursionError:  # libcst recurses per nesting level / operand of a long operator chain
        click.echo(
            f"ddpify: error: {source}: code nested too deeply for ddpify's parser (e.g. an operator chain of "
            f"hundreds of operands); nothing written",
            err=True,
        )
        return EXIT_BAD_INPUT
    except Exception as error:  # never a traceback: one line, exit 3, nothing written (writes come last)
        if os.environ.get("DDPIFY_DEBUG"):
            raise
        first = str(error).splitlines()[0] if str(error) else ""
        click.echo(
            f"ddpify: internal error: {source}: {error.__class__.__name__}: {first}"
            f"; nothing written. This is a ddpify bug (DDPIFY_DEBUG=1 shows the traceback)",
            err=True,
        )
        return EXIT_INTERNAL
    return 0


def _convert_one(src: str, output: Path | None, options: _Options) -> None:
    from pathlib import Path

    from ddpify import source_io
    from ddpify.api import convert_source
    from ddpify.report import STDOUT, conversion_report

    if output is not None:
        source_io.check_output_path(output)  # before any work: a FIFO or a device is refused
    source, notebook = _read(src, options)
    source_name = "<stdin>" if src == "-" else src
    if output is not None and src != "-" and _same_file(Path(src), output):
        if notebook is not None:
            raise DdpifyError(f"{output}: output is the input notebook; write the result under another name")
        raise DdpifyError(f"{output}: output is the input file; use --in-place to rewrite it")
    result = convert_source(
        source.text,
        per_process_batch=options.per_process_batch,
        filename=source_name,
        standalone=options.standalone,
        annotate=options.annotate,
    )
    target = None if options.show_diff else src if options.in_place else str(output) if output is not None else STDOUT
    companions: list[tuple[TrainingModule, SourceFile, ConversionResult]] = []
    elsewhere = not result.changed or not result.trains_here or result.trained_elsewhere or result.wraps_for_modules
    if elsewhere and not result.already_converted and notebook is None and src != "-":
        result, companions = _training_modules(Path(src), result, output, options)
    report = ""  # built before writing: nothing can fail after the write
    if not options.quiet:
        locate = _in_cells(notebook) if notebook is not None else None
        report = conversion_report(result, source_name, target, locate=locate, notes=_notes(notebook))
        for module, _, converted in companions:
            report += conversion_report(converted, str(module.file), str(module.output), launch=False)
    for module, module_source, converted in companions:  # the modules first: the script imports them
        source_io.write_atomically(module.output, source_io.encode(module_source, converted.output))
    if options.show_diff:
        sys.stdout.write(_diff(result.source, result.output, source_name, notebook is not None))
    elif output is not None and output.suffix == ".ipynb":
        source_io.write_atomically(output, _launcher(result, src, output, notebook).encode("utf-8"))
    elif options.in_place or output is not None:
        destination = Path(src) if options.in_place else output
        assert destination is not None
        if not (options.in_place and not result.changed):
            source_io.write_atomically(destination, source_io.encode(source, result.output))
    else:
        sys.stdout.buffer.write(source_io.encode(source, result.output))
        sys.stdout.flush()
    if report:
        click.echo(report, err=True, nl=False)


def _training_modules(
    src: Path, result: ConversionResult, output: Path | None, options: _Options
) -> tuple[ConversionResult, list[tuple[TrainingModule, SourceFile, ConversionResult]]]:
    """A script that trains nothing itself (it may build the model and hand it over), or that
    wraps the models it hands to a trainer training them on data of its own, whose training is
    done by modules of its project (``ddpify.companions``): each converted alongside (told, in
    the second case, that the models it gets are DDP models), and the script's imports redirected.
    Only when the script's result is written next to it (its import must find the converted
    module); otherwise the report says what to run. Nothing is written here."""
    from ddpify import companions
    from ddpify.api import convert_source
    from ddpify.report import suggested_output

    modules = companions.training_modules(result.source, src)
    if not modules:
        return result, []
    files = frozenset(str(f.resolve()) for m in modules for f in (m.file, *(i.file for i in m.inner)))
    script = convert_source(  # its own prints, seeds, writes and process group, now that the training is DDP's
        result.source,
        per_process_batch=options.per_process_batch,
        filename=str(src),
        standalone=options.standalone,
        trains_elsewhere=True,
        companions=files,
    )
    beside = options.in_place or (output is not None and output.suffix != ".ipynb" and _same_folder(src, output))
    if not beside:
        command = f"ddpify {src} -o {src.with_name(suggested_output(src.name))}"
        return companions.advised(result, modules, command), []
    converted: list[tuple[TrainingModule, SourceFile, ConversionResult]] = []
    for module in modules:
        converted += _converted_module(module, result, script, options, files)
    if not converted:
        return result, []
    outer = {m.file for m in modules}
    return companions.redirected(script, [module for module, _, _ in converted if module.file in outer]), converted


def _converted_module(
    module: TrainingModule, result: ConversionResult, script: ConversionResult, options: _Options, files: frozenset[str]
) -> list[tuple[TrainingModule, SourceFile, ConversionResult]]:
    """``module`` converted for the script (nothing when that changes nothing); a module that
    trains through modules of its own (``TrainingModule.inner``) after those, told its
    training is theirs (``files``: all the modules converted alongside), its imports of them
    redirected."""
    from ddpify import companions, source_io
    from ddpify.api import convert_source

    inner = [c for m in module.inner for c in _converted_module(m, result, script, options, files)]
    module_source = source_io.read_source(module.file)
    module_result = convert_source(
        module_source.text,
        per_process_batch=options.per_process_batch,
        filename=str(module.file),
        standalone=options.standalone,
        trains_elsewhere=bool(module.inner),
        models_from_caller=result.wraps_for_modules and not module.inner,
        data_from_caller=script.shards_at_run_time and not module.inner,
        companions=files if module.inner else frozenset(),
    )
    if inner:
        module_result = companions.redirected(module_result, [m for m, _, _ in inner])
    if not module_result.changed:
        return inner
    if module.output.exists() and not companions.is_conversion(module.output):
        raise DdpifyError(f"{module.output}: exists and is not a ddpify conversion of {module.file.name}; nothing written")
    source_io.check_output_path(module.output)
    return [*inner, (module, module_source, module_result)]


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve().parent == b.resolve().parent
    except OSError:
        return False


def _read(src: str, options: _Options) -> tuple[SourceFile, NotebookScript | None]:
    """The input's text (a notebook's code cells as one script) and the notebook, if it is one."""
    from pathlib import Path

    from ddpify import source_io

    if src == "-":
        return source_io.decode(sys.stdin.buffer.read(), "<stdin>"), None
    if not src.endswith(".ipynb"):
        return source_io.read_source(Path(src)), None
    if options.in_place:
        raise DdpifyError(f"{src}: --in-place cannot turn a notebook into a script: use -o NAME.py (the script) or -o NAME.ipynb")
    from ddpify import notebook

    script = notebook.read(Path(src))
    return source_io.SourceFile(text=script.text, encoding="utf-8", bom=False), script


def _notes(notebook: NotebookScript | None) -> list[str]:
    return [f"cell_{note.cell}:{note.line}: {note.text}" for note in notebook.notes] if notebook is not None else []


def _in_cells(notebook: NotebookScript) -> Callable[[int], str]:
    """A script line as the notebook's ``cell_N:LINE``."""

    def where(line: int) -> str:
        found = notebook.locate(line)
        return f"cell_{found[0]}:{found[1]}" if found else f"L{line}"

    return where


def _launcher(result: ConversionResult, src: str, output: Path, notebook: NotebookScript | None) -> str:
    """The notebook written for ``-o NAME.ipynb``: it writes NAME.py beside itself and launches it."""
    from pathlib import Path

    from ddpify import notebook as notebooks

    script = f"{output.stem}.py"
    if src != "-" and _same_file(Path(src), output.parent / script):  # running it must not overwrite the input
        script = f"{output.stem}_ddp.py"
    from ddpify.report import cite

    where = _in_cells(notebook) if notebook is not None else (lambda line: f"L{line}")
    text = (lambda message: cite(message, where)) if notebook is not None else (lambda message: message)
    notes = [*_notes(notebook), *(f"{where(item.line)}: {text(item.why)} -> {text(item.todo)}" for item in result.manual)]
    metadata = notebook.metadata if notebook is not None else {}
    return notebooks.launcher(result.output, script, src, notes, metadata, launch=result.changed)


def _diff(before: str, after: str, name: str, is_notebook: bool) -> str:
    import difflib  # only for --diff: --help/--version stay light

    origin = f"{name} (code cells)" if is_notebook else name
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=origin, tofile=f"{name} (ddpify)"
    )
    return "".join(lines)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return b.exists() and (a.resolve() == b.resolve() or os.path.samefile(a, b))  # symlinks, hard links
    except OSError:
        return False

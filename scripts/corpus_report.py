#!/usr/bin/env python3
"""Grade ddpify on the real-script corpus: convert each script, compare with its grading key.

    python scripts/corpus_report.py [--corpus DIR] [--keys DIR] [--run] [--details] [--out DIR]

The corpus is not part of the repository (see shared/corpus/README.md): by default the scripts
are read from ../corpus (beside the checkout) and the keys from ../shared/corpus/expected.
For every train loader, model, epoch loop (set_epoch), save, load and rank-0-only item of a key,
the script decides whether the conversion

  made      the required change (the item's statement was rewritten as the key asks),
  reported  it: an item for a human (ConversionResult.manual) on the item's statement or
            naming the item's variable, or
  missed    it: neither.

Models marked "must NOT be wrapped" count as made when they stay unwrapped; one to wrap "ONLY
when" a condition holds, if wrapped, counts as reported with an item naming it (ddpify's
prepare_model leaves a model without trainable parameters unwrapped). With ``--run``, the
runnable scripts are converted into ``--out`` and launched with their CPU launcher under
``torchrun --standalone --nproc_per_node=2`` (PYTHON/TORCHRUN from the environment, default
/work/tvenv/bin). Prints a markdown table, then (``--details``) every miss and report.
Needs PyYAML (only for this script; not a ddpify dependency); without it a minimal reader of the
keys' subset of YAML is used.

Other corpora: ``--keys tests/corpus/keys --scripts /work/corpus-new`` grades a keys folder against a
scripts folder of your choice (``--scripts`` is ``--corpus``). Those keys may also hold
``eval_loaders`` (made when left unsharded, WRONG when a loader marked ``must_not_shard`` was
converted) and ``checks:`` items (see tests/corpus/README.md): ``made_if`` / ``wrong_if`` regexes on
the item's output, ``names`` for reports, ``optional`` and ``hand`` items. ``--hand FILE`` applies
verdicts given by hand after reading the diff (``{script: [{line, category, verdict, why}]}``); an
item marked ``hand`` with no such verdict is listed as ``hand?``. Verdicts: made, reported, MISSED,
WRONG (done incorrectly, or reported with a wrong line or reason).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ddpify import source_io
from ddpify.api import convert_source
from ddpify.errors import DdpifyError
from ddpify.findings import ConversionResult

ROOT = Path(__file__).resolve().parents[1]
MADE, REPORTED, MISSED, NA = "made", "reported", "MISSED", "n/a"
WRONG, HAND = "WRONG", "hand?"  # done incorrectly; hand-graded item without a verdict yet


# --- reading keys ----------------------------------------------------------------------------

def load_key(path: Path) -> dict:
    try:
        import yaml
    except ImportError:  # pragma: no cover - minimal fallback
        return _mini_yaml(path.read_text())
    return yaml.safe_load(path.read_text())


def _mini_yaml(text: str) -> dict:  # pragma: no cover
    """Just enough YAML for the keys' line/code/var fields: top-level lists of flow or block maps."""
    data: dict[str, Any] = {}
    current: Optional[str] = None
    item: Optional[dict] = None
    for raw in text.splitlines():
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith(("code", "construct_code")) else raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" ") and ":" in line:
            current, _, rest = line.partition(":")
            data[current] = [] if not rest.strip() else rest.strip()
            item = None
            continue
        stripped = line.strip()
        if stripped.startswith("- ") and isinstance(data.get(current), list):
            item = {}
            data[current].append(item)
            stripped = stripped[2:]
            if stripped.startswith("{"):
                for key, value in re.findall(r"(\w+): (\"[^\"]*\"|'[^']*'|[^,}]*)", stripped):
                    item[key] = _scalar(value)
                continue
        if item is not None and re.match(r"\w+: ", stripped):
            key, _, value = stripped.partition(": ")
            item[key] = _scalar(value)
        elif current is not None and re.match(r"\w+: ", stripped) and not isinstance(data.get(current), list):
            if not isinstance(data[current], dict):
                data[current] = {}
            key, _, value = stripped.partition(": ")
            data[current][key] = _scalar(value)
    return data


def _scalar(value: str) -> Any:
    value = value.strip()
    if value[:1] in "\"'" and value[-1:] == value[:1]:
        return value[1:-1].replace('\\"', '"')
    return int(value) if value.isdigit() else value


# --- locating statements -----------------------------------------------------------------------

class Script:
    """The input, its statements' line spans, the output and an input->output line map."""

    def __init__(self, source: str, result: ConversionResult) -> None:
        self.source = source
        self.result = result
        self.lines = source.splitlines()
        self.out_lines = result.output.splitlines()
        self.spans = _statement_spans(source)
        # compared without indentation: wrapping a main guard's body re-indents every line of it
        self.opcodes = difflib.SequenceMatcher(None, [l.strip() for l in self.lines], [l.strip() for l in self.out_lines],
                                               autojunk=False).get_opcodes()

    def locate(self, line: int, code: str) -> tuple[int, str]:
        """The key's line, checked against its code; a nearby or unique match when it is off."""
        want = _norm(code)
        if not want or 0 < line <= len(self.lines) and want in _norm(self.lines[line - 1]):
            return line, ""
        for delta in range(1, 6):
            for candidate in (line - delta, line + delta):
                if 0 < candidate <= len(self.lines) and want in _norm(self.lines[candidate - 1]):
                    return candidate, f"key line {line} is at {candidate}"
        hits = [i + 1 for i, text in enumerate(self.lines) if want in _norm(text)]
        if hits:
            return hits[0], f"key line {line} is at {hits[0]}"
        return line, f"key code not found: {code!r}"

    def span(self, line: int) -> tuple[int, int]:
        best = (line, line)
        for start, end in self.spans:
            if start <= line <= end and (best == (line, line) or end - start < best[1] - best[0]):
                best = (start, end)
        return best

    def output_for(self, start: int, end: int) -> str:
        """Output lines that came from input lines start..end (1-based), with lines inserted
        right before or after them."""
        a, b = start - 1, end
        picked: list[str] = []
        for index, (tag, i1, i2, j1, j2) in enumerate(self.opcodes):
            if tag == "insert":
                if i1 in (a, b):
                    picked += self.out_lines[j1:j2]
                continue
            if i2 <= a or i1 >= b:
                continue
            if tag == "equal":
                lo, hi = max(i1, a), min(i2, b)
                picked += self.out_lines[j1 + lo - i1: j1 + hi - i1]
            elif tag == "replace":
                picked += self.out_lines[j1:j2]
        return "\n".join(picked)

    def changed(self, start: int, end: int) -> bool:
        return any(tag != "equal" and i1 < end and i2 > start - 1 for tag, i1, i2, _, _ in self.opcodes) or any(
            start <= c.line <= end for c in self.result.changes)

    def manual_for(self, start: int, end: int, names: tuple[str, ...] = ()) -> list[str]:
        found = []
        for item in self.result.manual:
            text = f"{item.why} {item.todo}"
            near = start <= item.line <= end
            named = any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", text) for n in names if n)
            if near or named:
                found.append(f"L{item.line}: {item.why}")
        return found


def _statement_spans(source: str) -> list[tuple[int, int]]:
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except cst.ParserSyntaxError:
        return []
    positions = wrapper.resolve(PositionProvider)
    spans = []
    for node, pos in positions.items():
        if isinstance(node, cst.SimpleStatementLine):
            spans.append((pos.start.line, pos.end.line))
        elif isinstance(node, cst.BaseCompoundStatement):
            body = getattr(node, "body", None)
            header_end = positions[body].start.line if body is not None and body in positions else pos.start.line
            if isinstance(body, cst.IndentedBlock):
                header_end = max(pos.start.line, header_end - 1 if header_end > pos.start.line else header_end)
            spans.append((pos.start.line, header_end))
    return spans


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("\\'", "'").replace('\\"', '"'))


# --- grading ---------------------------------------------------------------------------------

@dataclass
class Verdict:
    category: str
    line: int
    code: str
    verdict: str
    detail: str = ""


@dataclass
class Graded:
    name: str
    result: Optional[ConversionResult]
    error: str = ""
    verdicts: list[Verdict] = field(default_factory=list)
    run: str = ""


def _as_list(value: Any) -> list[dict]:
    if isinstance(value, dict):
        return [value]
    return [v for v in value or [] if isinstance(v, dict)]


def _wrapped(output: str, var: str) -> int:
    return len(re.findall(rf"(?<![\w.]){re.escape(var)}\s*=\s*ddpify\.prepare_model\(\s*{re.escape(var)}\s*[,)]", output))


def grade(name: str, source: str, key: dict) -> Graded:
    try:
        result = convert_source(source, filename=name)
    except DdpifyError as error:
        return Graded(name, None, error=str(error))
    script = Script(source, result)
    graded = Graded(name, result)
    add = graded.verdicts.append

    def item(category: str, entry: dict, line_key: str = "line", code_key: str = "code") -> Optional[tuple[int, int, int, str, str]]:
        if not isinstance(entry.get(line_key), int):
            return None
        line, note = script.locate(entry[line_key], str(entry.get(code_key, "")))
        start, end = script.span(line)
        return line, start, end, note, str(entry.get(code_key, ""))

    # train loaders: distributed_loader / DistributedSampler / ddpify.shard on the loader's statement
    for entry in _as_list(key.get("train_loaders")):
        found = item("loader", entry)
        if found is None:
            continue
        line, start, end, note, code = found
        out = script.output_for(start, end)
        # ddpify.shard(loader) right after the statement: a loader built in another file, rebuilt
        # with a DistributedSampler at run time
        if "distributed_loader(" in out or "DistributedSampler" in out or "ddpify.shard(" in out:
            add(Verdict("train loader", line, code, MADE, note))
        elif reports := script.manual_for(start, end, (entry.get("var", ""),)):
            add(Verdict("train loader", line, code, REPORTED, "; ".join(reports)))
        else:
            where = f"built in {entry['built_in']}" if entry.get("built_in") else ""
            add(Verdict("train loader", line, code, MISSED, "; ".join(x for x in (note, where) if x)))

    # models: `var = ddpify.prepare_model(var)` somewhere; models that must stay unwrapped stay so
    models = _as_list(key.get("models"))
    required = {}
    for entry in models:
        wrap = str(entry.get("wrap", ""))
        if not re.search(r"must not|NOT be wrapped|ONLY when", wrap, re.I):
            required[entry["var"]] = required.get(entry["var"], 0) + 1
    for entry in models:
        found = item("model", entry, "construct_line", "construct_code")
        if found is None:
            continue
        line, start, end, note, code = found
        var = str(entry["var"])
        wrap = str(entry.get("wrap", ""))
        count = _wrapped(result.output, var)
        if re.search(r"must not|NOT be wrapped|ONLY when", wrap, re.I):
            verdict = MADE if count <= required.get(var, 0) else MISSED
            reports = script.manual_for(start, end, (var,)) if verdict == MISSED and re.search(r"ONLY when", wrap, re.I) else []
            if reports:  # wrapped only when a condition holds: an item naming it reports the condition
                add(Verdict("model (stays unwrapped)", line, code, REPORTED, "; ".join(reports)))
                continue
            add(Verdict("model (stays unwrapped)", line, code, verdict,
                        "" if verdict == MADE else f"{var} wrapped {count}x, must not be: {wrap[:100]}"))
        elif count:
            add(Verdict("model", line, code, MADE, note))
        elif reports := script.manual_for(start, end, (var,)):
            add(Verdict("model", line, code, REPORTED, "; ".join(reports)))
        else:
            add(Verdict("model", line, code, MISSED, f"{var} not wrapped; key: {wrap[:120]}"))

    # epoch loop: ddpify.set_epoch in the loop body (or anywhere, e.g. the top of train())
    loop = key.get("epoch_loop") or {}
    if isinstance(loop, dict) and isinstance(loop.get("line"), int):
        line, note = script.locate(loop["line"], str(loop.get("code", "")))
        wanted = str(loop.get("set_epoch", ""))
        if wanted.strip().lower().startswith("n/a"):
            add(Verdict("set_epoch", line, str(loop.get("code", "")), NA, wanted[:80]))
        else:
            body = _loop_body_output(script, line)
            loaders_converted = "distributed_loader(" in result.output
            if "set_epoch(" in body:
                add(Verdict("set_epoch", line, str(loop["code"]), MADE, note))
            elif "set_epoch(" in result.output:
                add(Verdict("set_epoch", line, str(loop["code"]), MADE, "set_epoch outside the loop body"))
            elif reports := script.manual_for(*script.span(line)):
                add(Verdict("set_epoch", line, str(loop["code"]), REPORTED, "; ".join(reports)))
            else:
                add(Verdict("set_epoch", line, str(loop["code"]), MISSED,
                            "no set_epoch" + ("; the runtime loader advances its epoch per pass" if loaders_converted else "")))

    # saves: rank-0 writing (ddpify.save / a main-process guard); unwrapped state dicts
    for entry in _as_list(key.get("saves")):
        found = item("save", entry)
        if found is None:
            continue
        line, start, end, note, code = found
        kind = str(entry.get("kind") or "checkpoint")
        guard = entry.get("rank0_guard")
        if guard in (None, False, "no", "not_needed") and kind == "checkpoint" and not entry.get("unwrap"):
            continue
        out = script.output_for(start, end)
        context = _enclosing_output(script, start)
        label = "save" if kind == "checkpoint" else f"save ({kind})"
        rank0_needed = bool(guard) and str(guard).strip().lower() not in ("no", "not_needed", "none", "false")
        rank0 = not rank0_needed or "ddpify.save(" in out or "is_main_process()" in out or "is_main_process()" in context or "rank_zero" in out
        state_dicts = re.findall(r"([\w.]+)\.state_dict\(\)", code)
        pickled = re.findall(r"save\(\s*([\w.]+)\s*,", code)  # torch.save(model, f): the whole module
        unwrap_needed = (bool(entry.get("unwrap")) and any(_wrapped(result.output, v) for v in state_dicts)) or any(
            _wrapped(result.output, v) for v in pickled)
        if entry.get("unwrap") and isinstance(entry.get("state_line"), int):  # the dict saved is built elsewhere
            state_line, _ = script.locate(entry["state_line"], str(entry.get("state_code", "")))
            held = re.findall(r":\s*([\w.]+)\s*,?\s*$", script.lines[state_line - 1])
            if any(_wrapped(result.output, v) for v in held):
                unwrap_needed = True
                out += "\n" + script.output_for(*script.span(state_line))
        unwrapped = not unwrap_needed or "unwrap(" in out or ".module" in out
        if rank0 and unwrapped:
            add(Verdict(label, line, code, MADE, note))
        elif reports := script.manual_for(start, end):
            add(Verdict(label, line, code, REPORTED, "; ".join(reports)))
        else:
            missing = [w for w, ok in (("rank-0 guard", rank0), ("unwrap", unwrapped)) if not ok]
            add(Verdict(label, line, code, MISSED, f"missing {' + '.join(missing)}"))

    # loads: map_location / ddpify.load / ddpify.load_state_dict
    for entry in _as_list(key.get("loads")):
        found = item("load", entry)
        if found is None or not re.search(r"torch\.load|load_state_dict|load_checkpoint", str(entry.get("code", ""))):
            continue  # pickle.load of a vocabulary and the like: nothing device-specific
        line, start, end, note, code = found
        out = script.output_for(start, end)
        if any(t in out for t in ("map_location", "ddpify.load(", "ddpify.load_state_dict(")):
            add(Verdict("load", line, code, MADE, note))
        elif reports := script.manual_for(start, end):
            add(Verdict("load", line, code, REPORTED, "; ".join(reports)))
        else:
            add(Verdict("load", line, code, MISSED, "no map_location"))

    # rank-0-only output
    for entry in _as_list(key.get("rank0_only")):
        if entry.get("file"):
            continue  # in another file
        found = item("rank0", entry)
        if found is None:
            continue
        line, start, end, note, code = found
        out = script.output_for(start, end)
        context = _enclosing_output(script, start)
        tokens = ("ddpify.print(", "is_main_process()", "rank_zero(", "disable=")
        if any(t in out for t in tokens) or "is_main_process()" in context or "get_rank() == 0" in context:
            add(Verdict("rank0", line, code, MADE, note))
        elif _MKDIR.search(code) and "exist_ok=True" in out and "exist_ok" not in "\n".join(script.lines[start - 1:end]):
            # the item is the check-then-create race; a directory every rank creates with
            # exist_ok=True has none, and each rank then finds it before writing into it.
            # Only when the conversion added exist_ok: one already there is not this item's fix
            add(Verdict("rank0", line, code, MADE, "; ".join(x for x in (note, "exist_ok=True on every rank") if x)))
        elif reports := script.manual_for(start, end):
            add(Verdict("rank0", line, code, REPORTED, "; ".join(reports)))
        else:
            add(Verdict("rank0", line, code, MISSED, str(entry.get("note", ""))[:120]))

    # evaluation loaders: left unsharded (the design: every rank evaluates everything)
    for entry in _as_list(key.get("eval_loaders")):
        found = item("eval loader", entry)
        if found is None:
            continue
        line, start, end, note, code = found
        out = script.output_for(start, end)
        sharded = any(t in out for t in ("distributed_loader(", "DistributedSampler", "ddpify.shard("))
        if not sharded:
            add(Verdict("eval loader", line, code, MADE, note))
        elif entry.get("must_not_shard"):
            add(Verdict("eval loader", line, code, WRONG, "sharded, must stay a plain DataLoader: " + str(entry.get("expected", ""))[:100]))
        else:
            add(Verdict("eval loader", line, code, MADE, "sharded (acceptable per key)"))

    # free-form checks: made_if / wrong_if regexes, reports, hand items
    for entry in _as_list(key.get("checks")):
        found = item("check", entry)
        if found is None:
            continue
        line, start, end, note, code = found
        category = f"check:{entry.get('category', '?')}:{entry.get('id', '?')}"
        out = script.output_for(start, end)
        scope = {"span": out, "file": result.output}

        def matches(pattern_key: str, scope_key: str, entry: dict = entry, scope: dict = scope) -> bool:
            pattern = entry.get(pattern_key)
            return bool(pattern) and re.search(str(pattern), scope[str(entry.get(scope_key) or "span")], re.M) is not None

        reports = script.manual_for(start, end, tuple(str(n) for n in entry.get("names") or ()))
        if matches("wrong_if", "wrong_scope"):
            add(Verdict(category, line, code, WRONG, f"output matches wrong_if {entry['wrong_if']!r}"))
        elif entry.get("made_if") and matches("made_if", "made_scope"):
            add(Verdict(category, line, code, MADE, note))
        elif entry.get("hand"):
            add(Verdict(category, line, code, HAND, "; ".join(reports)))
        elif reports:
            add(Verdict(category, line, code, REPORTED, "; ".join(reports)))
        elif entry.get("optional"):
            add(Verdict(category, line, code, NA, "optional optimisation not applied"))
        else:
            add(Verdict(category, line, code, MISSED, str(entry.get("required", ""))[:120]))
    return graded


def apply_hand(graded: Graded, hand: list[dict]) -> None:
    """Replace automatic verdicts by the hand-given ones of this script (matched on line and a
    category prefix); a hand entry matching nothing is added as its own item."""
    for entry in hand:
        wanted = str(entry.get("category", ""))
        verdict = {"made": MADE, "reported": REPORTED, "missed": MISSED, "wrong": WRONG, "n/a": NA}[str(entry["verdict"]).lower()]
        hits = [v for v in graded.verdicts if v.line == entry.get("line") and v.category.startswith(wanted)]
        for v in hits:
            v.verdict, v.detail = verdict, f"[hand] {entry.get('why', '')}"
        if not hits:
            graded.verdicts.append(Verdict(wanted or "hand", int(entry.get("line", 0)), str(entry.get("code", "")), verdict,
                                           f"[hand] {entry.get('why', '')}"))


_MKDIR = re.compile(r"\b(mkdir|makedirs)\(")


def _loop_body_output(script: Script, line: int) -> str:
    """Output text of the loop whose header is input line ``line``: from the header's output
    line down to the first line indented no deeper than the header."""
    header = script.lines[line - 1].strip()
    out = script.out_lines
    candidates = [j for j, text in enumerate(out) if text.strip() == header]
    if not candidates:
        return ""
    j = candidates[0]
    indent = len(out[j]) - len(out[j].lstrip())
    body = []
    for text in out[j + 1:]:
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        body.append(text)
    return "\n".join(body)


def _enclosing_output(script: Script, line: int) -> str:
    """The output lines of the compound statements (if/with headers) enclosing input ``line``,
    and the header the conversion put around it (an inserted ``if ddpify.is_main_process():``
    that the line diff may have attached to a changed neighbour instead)."""
    return "\n".join((_inserted_header(script, line), _input_headers(script, line)))


def _inserted_header(script: Script, line: int) -> str:
    """The nearest output line above input ``line``'s output that is indented less than it."""
    for tag, i1, i2, j1, _ in script.opcodes:
        if tag == "equal" and i1 < line <= i2:
            j = j1 + line - 1 - i1
            text = script.out_lines[j]
            indent = len(text) - len(text.lstrip())
            for above in reversed(script.out_lines[:j]):
                if above.strip() and len(above) - len(above.lstrip()) < indent:
                    return above
            break
    return ""


def _input_headers(script: Script, line: int) -> str:
    """The output of the input's own headers enclosing ``line``."""
    text = script.lines[line - 1]
    indent = len(text) - len(text.lstrip())
    headers = []
    for i in range(line - 2, -1, -1):
        candidate = script.lines[i]
        if not candidate.strip():
            continue
        depth = len(candidate) - len(candidate.lstrip())
        if depth < indent:
            headers.append(i + 1)
            indent = depth
        if depth == 0:
            break
    return "\n".join(script.output_for(h, h) for h in headers)


# --- running ---------------------------------------------------------------------------------

def run_converted(name: str, converted: Path, launcher: Path, python: str, torchrun: str, timeout: int) -> str:
    environment = dict(os.environ, SCRIPT=str(converted), PYTHON=python,
                       RUNNER=f"{torchrun} --standalone --nproc_per_node=2")
    started = time.perf_counter()
    try:
        done = subprocess.run(["bash", str(launcher)], env=environment, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"TIMEOUT after {timeout}s"
    seconds = time.perf_counter() - started
    if done.returncode == 0:
        return f"ok, 2 ranks ({seconds:.0f}s)"
    tail = [l for l in (done.stderr + done.stdout).splitlines() if re.search(r"Error|error|assert|Exception", l)]
    return f"FAIL rc={done.returncode}: {(tail[-1] if tail else '').strip()[:140]}"


# --- main ------------------------------------------------------------------------------------

def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", "--scripts", dest="corpus", type=Path, default=ROOT.parent / "corpus",
                        help="folder of the scripts (<name>.py); only those with a key are graded when --keys is given")
    parser.add_argument("--keys", type=Path, default=ROOT.parent / "shared" / "corpus" / "expected")
    parser.add_argument("--launchers", type=Path, default=ROOT.parent / "shared" / "corpus" / "run")
    parser.add_argument("--run", action="store_true", help="run the runnable ones, converted, under torchrun (2 CPU ranks)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ddpify_corpus"), help="where converted scripts go")
    parser.add_argument("--details", action="store_true", help="list every miss and report after the table")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--hand", type=Path, help="YAML of hand-given verdicts {script: [{line, category, verdict, why}]}")
    parser.add_argument("names", nargs="*", help="only these scripts")
    args = parser.parse_args(argv)
    python = os.environ.get("PYTHON", "/work/tvenv/bin/python")
    torchrun = os.environ.get("TORCHRUN", str(Path(python).parent / "torchrun"))

    scripts = sorted(p for p in args.corpus.glob("*.py") if (not args.names or p.stem in args.names)
                     and (args.keys / f"{p.stem}.yaml").exists())
    hand = load_key(args.hand) if args.hand else {}
    if not scripts:
        parser.error(f"no scripts in {args.corpus}")
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[Graded] = []
    for path in scripts:
        key_path = args.keys / f"{path.stem}.yaml"
        key = load_key(key_path) if key_path.exists() else {}
        decoded = source_io.decode(path.read_bytes(), path.name)
        graded = grade(path.stem, decoded.text, key)
        apply_hand(graded, (hand or {}).get(path.stem) or [])
        if graded.result is not None:
            converted = args.out / f"{path.stem}_ddp.py"
            converted.write_bytes(source_io.encode(decoded, graded.result.output))
            launcher = args.launchers / f"{path.stem}.sh"
            if args.run and key.get("runnable") and launcher.exists():
                graded.run = run_converted(path.stem, converted, launcher, python, torchrun, args.timeout)
                print(f"[run] {path.stem}: {graded.run}", file=sys.stderr)
        rows.append(graded)

    print("| script | changes made | items reported for a human | key items made / reported / missed / wrong | key items missed or wrong | run (torchrun, 2 CPU ranks) |")
    print("|---|---|---|---|---|---|")
    totals = [0, 0, 0, 0, 0, 0, 0]
    for g in rows:
        if g.result is None:
            print(f"| {g.name} | refused: {g.error} | | | | |")
            continue
        counts = {v: sum(1 for x in g.verdicts if x.verdict == v) for v in (MADE, REPORTED, MISSED, WRONG, HAND)}
        bad = "; ".join(f"{v.verdict} {v.category} L{v.line}" for v in g.verdicts if v.verdict in (MISSED, WRONG)) or "-"
        pending = f" (+{counts[HAND]} hand?)" if counts[HAND] else ""
        print(f"| {g.name} | {len(g.result.changes)} | {len(g.result.manual)} | {counts[MADE]} / {counts[REPORTED]} / "
              f"{counts[MISSED]} / {counts[WRONG]}{pending} | {bad} | {g.run or '-'} |")
        for i, value in enumerate((len(g.result.changes), len(g.result.manual), counts[MADE], counts[REPORTED], counts[MISSED],
                                   counts[WRONG], counts[HAND])):
            totals[i] += value
    pending = f" (+{totals[6]} hand?)" if totals[6] else ""
    print(f"| **total ({len(rows)})** | {totals[0]} | {totals[1]} | {totals[2]} / {totals[3]} / {totals[4]} / {totals[5]}{pending} | | |")

    if args.details:
        for g in rows:
            interesting = [v for v in g.verdicts if v.verdict in (MISSED, REPORTED, WRONG, HAND) or v.detail]
            if not interesting:
                continue
            print(f"\n### {g.name}")
            for v in interesting:
                print(f"- {v.verdict} {v.category} L{v.line} `{v.code.strip()[:70]}`" + (f": {v.detail}" if v.detail else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

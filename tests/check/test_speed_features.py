"""What makes ``ddpify check`` fast must never change what it reports: the result cache (never
stale, safe to delete, bypassed by --no-cache), the process pool (same outcome as one
process), the engine's fast traversals (same visitor calls as libcst's), and the progress bar
(on a terminal only; piped output stays clean)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ddpify.check import cache as cache_module
from ddpify.check import engine
from ddpify.check.rules import ALL_RULES
from ddpify.check.progress import ProgressBar
from ddpify.check.run import Options, check_paths
from ddpify.check.file_info import FileInfo
from ddpify.tree.metadata import FastMetadata, visitor_names

BUGGY = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
state = torch.load("ckpt.pt")
torch.save(state, "copy.pt")
print("saved")
dist.destroy_process_group()
"""
CLEAN = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
state = torch.load("ckpt.pt", map_location="cpu")
if dist.get_rank() == 0:
    torch.save(state, "copy.pt")
dist.destroy_process_group()
"""
SINGLE_GPU = "import torch\nprint(torch.zeros(1).cuda())\n"
BROKEN = "import torch.distributed as dist\ndef (:\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "buggy.py").write_text(BUGGY)
    (root / "clean.py").write_text(CLEAN)
    (root / "single.py").write_text(SINGLE_GPU)
    return root


@pytest.fixture
def engine_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the engine is asked to check (in this process)."""
    calls: list[str] = []
    real = engine.check_source

    def counting(source, path="<string>", **kwargs):  # type: ignore[no-untyped-def]
        calls.append(Path(path).name)
        return real(source, path, **kwargs)

    monkeypatch.setattr(engine, "check_source", counting)
    return calls


def _options(tmp_path: Path, **changes) -> Options:  # type: ignore[no-untyped-def]
    changes.setdefault("select", ("DDP",))  # every rule: DDP004/DDP005/DDP012 are opt-in
    return Options(cache_dir=tmp_path / "cache", jobs=1, **changes)


def _findings(outcome) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(Path(f.path).name, f.line, f.column, f.code, f.message, f.fix) for r in outcome.results for f in r.findings]


# ---------------------------------------------------------------- cache
def test_second_run_answers_from_the_cache(project: Path, tmp_path: Path, engine_calls: list[str]) -> None:
    first = check_paths([project], _options(tmp_path))
    assert engine_calls == ["buggy.py", "clean.py"]  # single.py never mentions distributed training
    codes = {f[3] for f in _findings(first)}
    assert {"DDP004", "DDP005", "DDP012"} <= codes
    engine_calls.clear()
    second = check_paths([project], _options(tmp_path))
    assert engine_calls == []
    assert _findings(second) == _findings(first)
    assert [r.path for r in second.results] == [r.path for r in first.results]
    assert [r.distributed for r in second.results] == [r.distributed for r in first.results]


def test_cache_entries_do_not_depend_on_the_path(project: Path, tmp_path: Path, engine_calls: list[str]) -> None:
    check_paths([project / "buggy.py"], _options(tmp_path))
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "renamed.py").write_text(BUGGY)
    engine_calls.clear()
    outcome = check_paths([moved / "renamed.py"], _options(tmp_path))
    assert engine_calls == []
    assert {Path(f.path).name for r in outcome.results for f in r.findings} == {"renamed.py"}


def test_any_change_of_input_misses(project: Path, tmp_path: Path, engine_calls: list[str]) -> None:
    check_paths([project / "buggy.py"], _options(tmp_path))
    engine_calls.clear()
    (project / "buggy.py").write_text(BUGGY + "# edited\n")
    check_paths([project / "buggy.py"], _options(tmp_path))
    assert engine_calls == ["buggy.py"]
    for changed in ({"select": ("DDP004",)}, {"ignore": ("DDP012",)}, {"require_ddp": True}):
        engine_calls.clear()
        outcome = check_paths([project / "buggy.py"], _options(tmp_path, **changed))
        assert engine_calls == ["buggy.py"], changed
        if "select" in changed:
            assert {f.code for r in outcome.results for f in r.findings} == {"DDP004"}


def test_config_is_part_of_the_key(project: Path, tmp_path: Path, engine_calls: list[str]) -> None:
    check_paths([project / "buggy.py"], _options(tmp_path))
    (project / "pyproject.toml").write_text('[tool.ddpify]\nignore = ["DDP012"]\n')
    from ddpify.check import config

    config._config_in.cache_clear()
    engine_calls.clear()
    outcome = check_paths([project / "buggy.py"], _options(tmp_path))
    assert engine_calls == ["buggy.py"]
    assert "DDP012" not in {f.code for r in outcome.results for f in r.findings}


def test_a_new_checker_build_misses(project: Path, tmp_path: Path, engine_calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    check_paths([project / "buggy.py"], _options(tmp_path))
    engine_calls.clear()
    monkeypatch.setattr(cache_module, "fingerprint", lambda: "another ddpify")
    check_paths([project / "buggy.py"], _options(tmp_path))
    assert engine_calls == ["buggy.py"]


def test_fingerprint_covers_every_module_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / "ddpify"
    (package / "check" / "rules").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    rule = package / "check" / "rules" / "ddp001.py"
    rule.write_text("CODE = 1\n")
    before = cache_module.package_fingerprint(package)
    assert before == cache_module.package_fingerprint(package)
    rule.write_text("CODE = 2\n")  # an edited rule in a development checkout
    edited = cache_module.package_fingerprint(package)
    (package / "check" / "rules" / "ddp002.py").write_text("")  # a new rule
    assert len({before, edited, cache_module.package_fingerprint(package)}) == 3


def test_no_cache_neither_reads_nor_writes(project: Path, tmp_path: Path, engine_calls: list[str]) -> None:
    options = _options(tmp_path, cache=False)
    check_paths([project], options)
    check_paths([project], options)
    assert engine_calls == ["buggy.py", "clean.py"] * 2
    assert not (tmp_path / "cache").exists()


def test_broken_entries_and_a_deleted_cache_are_harmless(project: Path, tmp_path: Path, engine_calls: list[str]) -> None:
    first = check_paths([project], _options(tmp_path))
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert entries
    for entry in entries:
        entry.write_text("{not json")
    engine_calls.clear()
    assert _findings(check_paths([project], _options(tmp_path))) == _findings(first)
    assert engine_calls == ["buggy.py", "clean.py"]
    import shutil

    shutil.rmtree(tmp_path / "cache")
    assert _findings(check_paths([project], _options(tmp_path))) == _findings(first)


def test_fix_runs_the_engine_when_the_cache_knows_of_a_fix(project: Path, tmp_path: Path) -> None:
    check_paths([project / "buggy.py"], _options(tmp_path))
    outcome = check_paths([project / "buggy.py"], _options(tmp_path, fix=True))
    assert outcome.results[0].fixed is not None
    assert "dist.get_rank() == 0" in (project / "buggy.py").read_text()


def test_cached_syntax_errors_are_never_results(project: Path, tmp_path: Path) -> None:
    (project / "broken.py").write_text(BROKEN)
    for _ in range(2):
        outcome = check_paths([project / "broken.py"], _options(tmp_path))
        assert outcome.results == [] and len(outcome.errors) == 1 and "broken.py:2:" in outcome.errors[0]


def test_cli_uses_the_cache_dir_from_the_environment(project: Path, tmp_path: Path) -> None:
    env = {**os.environ, "DDPIFY_CACHE_DIR": str(tmp_path / "envcache")}
    command = [sys.executable, "-m", "ddpify", "check", "--select", "DDP", "buggy.py"]
    first = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert list((tmp_path / "envcache").rglob("*.json"))
    second = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert (first.returncode, first.stdout) == (second.returncode, second.stdout) == (1, first.stdout)
    probe = "import sys, runpy; sys.argv = ['ddpify', 'check', '--select', 'DDP', 'buggy.py']; runpy.run_module('ddpify', run_name='__main__')"
    hit = subprocess.run([sys.executable, "-X", "importtime", "-c", probe], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert hit.stdout == first.stdout
    assert " libcst" not in hit.stderr, "a cache hit needs no libcst"
    fresh = tmp_path / "nocache"
    bypass = subprocess.run([*command, "--no-cache"], cwd=project, capture_output=True, text=True,
                            env={**env, "DDPIFY_CACHE_DIR": str(fresh)}, timeout=120)
    assert bypass.stdout == first.stdout and not fresh.exists()


# ---------------------------------------------------------------- pool
def test_pool_gives_the_outcome_of_one_process(project: Path, tmp_path: Path) -> None:
    for i in range(4):
        (project / f"more_{i}.py").write_text(BUGGY.replace("copy.pt", f"copy_{i}.pt"))
    (project / "broken.py").write_text(BROKEN)
    one = check_paths([project], Options(cache=False, jobs=1, select=("DDP",)))
    two = check_paths([project], Options(cache=False, jobs=2, select=("DDP",)))
    assert _findings(two) == _findings(one)
    assert [r.path for r in two.results] == [r.path for r in one.results]
    assert two.errors == one.errors and len(one.errors) == 1


# ---------------------------------------------------------------- engine internals
def test_visitor_methods_are_what_libcst_lists() -> None:
    file = FileInfo("x.py", "", None)  # type: ignore[arg-type]
    for rule in ALL_RULES:
        assert set(visitor_names(rule)) == set(rule(file).get_visitors()), rule.code


def test_already_converted_without_the_fact_pass() -> None:
    """The import scan agrees with what the fact pass's walk records (``Recording.imports_runtime``,
    which ``facts.already_converted`` is), on every fixture and example; the walk alone is run,
    not the whole fact pass that would follow it."""
    import libcst as cst

    from ddpify.convert.record import Recorder
    from ddpify.tree.metadata import run_visitor

    root = Path(__file__).resolve().parents[2]
    paths = sorted((root / "tests" / "fixtures").rglob("*.py")) + sorted((root / "examples").rglob("*.py"))
    converted = 0
    for path in paths:
        source = path.read_text(encoding="utf-8")
        module = cst.parse_module(source)
        cheap = FileInfo(str(path), source, FastMetadata(module)).already_converted
        recorder = Recorder()
        run_visitor(FastMetadata(module), recorder)
        assert cheap == recorder.recording.imports_runtime, path
        converted += cheap
    assert 0 < converted < len(paths)


# ---------------------------------------------------------------- progress
class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal_and_erases_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    from ddpify.check import progress as progress_module

    monkeypatch.setattr(progress_module, "DELAY_S", 0.0)
    monkeypatch.setattr(progress_module, "REDRAW_S", 0.0)
    stream = _Terminal()
    bar = ProgressBar(stream)
    for done in range(1, 41):
        bar(done, 40)
    bar.close()
    text = stream.getvalue()
    assert "40/40 files" in text and "[####" in text
    assert text.endswith("\r\x1b[K")


def test_no_progress_bar_off_a_terminal_or_for_few_files(monkeypatch: pytest.MonkeyPatch) -> None:
    from ddpify.check import progress as progress_module

    monkeypatch.setattr(progress_module, "DELAY_S", 0.0)
    piped = io.StringIO()
    bar = ProgressBar(piped)
    for done in range(1, 41):
        bar(done, 40)
    bar.close()
    assert piped.getvalue() == ""
    few = _Terminal()
    bar = ProgressBar(few)
    for done in range(1, 4):
        bar(done, 3)
    bar.close()
    assert few.getvalue() == ""


def _many_files(folder: Path, count: int = 30) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(count):
        (folder / f"train_{i:02d}.py").write_text(BUGGY.replace("copy.pt", f"copy_{i}.pt") * 3)


def test_piped_output_has_no_progress_bar(tmp_path: Path) -> None:
    _many_files(tmp_path / "many")
    result = subprocess.run([sys.executable, "-m", "ddpify", "check", "--no-cache", "--select", "DDP", "-j", "1", "many"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "\r" not in result.stderr and "\x1b" not in result.stderr and "files" not in result.stderr
    assert "\r" not in result.stdout and "\x1b" not in result.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_terminal_shows_a_progress_bar(tmp_path: Path) -> None:
    import pty

    _many_files(tmp_path / "many", 40)
    import threading

    controller, terminal = pty.openpty()
    seen = bytearray()

    def read() -> None:  # drain the terminal while the check runs, or a full buffer blocks it
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        process = subprocess.Popen([sys.executable, "-m", "ddpify", "check", "--no-cache", "--select", "DDP", "-j", "1", "many"], cwd=tmp_path,
                                   stdout=subprocess.PIPE, stderr=terminal, text=True)
        stdout, _ = process.communicate(timeout=300)
    finally:
        os.close(terminal)
        reader.join(timeout=10)
        os.close(controller)
    assert process.returncode == 1
    assert b"ddpify check [" in seen and b"/40 files" in seen
    assert bytes(seen).endswith(b"\r\x1b[K")
    assert "\r" not in stdout and "ddpify check [" not in stdout

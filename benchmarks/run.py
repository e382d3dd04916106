"""ddpify's speed, measured against baselines in the same run (medians; only ratios mean much
on a busy machine).

    bash scripts/bench.sh [FOLDER ...] [options]       # or: .venv/bin/python benchmarks/run.py ...

FOLDER: real PyTorch code to lint (default: the project's examples/ and tests/fixtures/). For a
large corpus, clone pytorch/examples, pytorch-image-models and nanoGPT into an ignored folder
(``/corpus/`` is in .gitignore) and pass it.

Sections (each command is a whole process, timed from start to exit; the commands of one table
run round-robin, ``--repeat`` rounds, so load changes hit every command alike):

1. ``ddpify check`` over the folder (no cache, one process / one per core / warm cache) vs
   ``libcst.parse_module`` alone over the same files (1 / N processes) and TorchFix.
2. One ~500-line training script: ``ddpify check``, ``ddpify FILE -o OUT`` vs
   ``python -c "import libcst"`` and ``torchfix FILE``.
3. ``ddpify --help`` / ``--version`` vs ``python -c "import click"`` (and what they import).
4. Runtime: ``import ddpify.runtime`` beyond ``import torch``; the median training-step time of
   ``benchmarks/data/train.py`` converted by ddpify vs ``benchmarks/data/train_ddp.py``, the same
   script made DDP by hand, both under ``torchrun --nproc_per_node=2`` on CPU (gloo).

TorchFix is installed into ``benchmarks/.venv`` (git-ignored) on first use; it is never a
dependency of ddpify. Options: ``--repeat N``, ``--rounds N`` (runtime), ``--skip-torchfix``,
``--skip-runtime``, ``--only runtime,cli`` (some sections), ``--torchfix-repeat N`` (fewer TorchFix rounds on a big corpus), ``--json PATH``
(raw numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
DATA = BENCH / "data"
VENV = BENCH / ".venv"
PYTHON = sys.executable
BIN = Path(PYTHON).parent

# Training run used for the step-time comparison: small enough for CPU, long enough for a
# stable median (each process takes global batch 64 / 2).
TRAIN_ARGS = ["--epochs", "2", "--train-size", "3072", "--val-size", "256", "--width", "8", "--blocks", "1",
              "--batch-size", "64", "--log-every", "0", "--no-save"]

TARGETS = {
    "corpus_vs_torchfix": 5.0,  # check throughput >= 5x TorchFix's
    "corpus_vs_parse": 3.0,  # check time <= 3x parse-only time
    "one_file_vs_torchfix": 0.35,  # check wall <= 0.35x TorchFix's
    "help_vs_click": 1.5,  # --help / --version <= 1.5x import click
    "step_vs_hand": 1.02,  # converted step time <= 1.02x hand-written
    "runtime_import_ms": 30.0,  # import ddpify.runtime <= 30 ms beyond torch
    "guards_vs_off": 1.01,  # converted step time with the default guard rails <= 1.01x without (DDPIFY_GUARDS=0)
}


@dataclass
class Result:
    name: str
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")


def _tool(name: str) -> list[str]:
    """A console script of this environment, or ``python -m``."""
    script = BIN / name
    return [str(script)] if script.exists() else [PYTHON, "-m", name]


def ddpify_cmd(*args: str) -> list[str]:
    return [*_tool("ddpify"), *args]


def run_timed(cmd: Sequence[str], env: Optional[dict] = None, ok: Sequence[int] = (0,)) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    elapsed = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr.decode()[-2000:]}")
    return elapsed


def round_robin(commands: dict[str, tuple[list[str], dict, Sequence[int]]], repeat: int, label: str,
                limits: Optional[dict[str, int]] = None) -> dict[str, Result]:
    """Every command once per round; a command named in ``limits`` only in its first rounds."""
    results = {name: Result(name) for name in commands}
    for round_index in range(repeat):
        for name, (cmd, env, ok) in commands.items():
            if limits and name in limits and round_index >= limits[name]:
                continue
            results[name].times.append(run_timed(cmd, env, ok))
        print(f"  [{label}] round {round_index + 1}/{repeat}", file=sys.stderr, flush=True)
    return results


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- torchfix
def ensure_torchfix() -> Optional[list[str]]:
    """``benchmarks/.venv/bin/torchfix``, installing it there on first use."""
    script = VENV / ("Scripts" if os.name == "nt" else "bin") / "torchfix"
    if script.exists():
        return [str(script)]
    print("  installing TorchFix into benchmarks/.venv (first run only)...", file=sys.stderr, flush=True)
    base = getattr(sys, "_base_executable", None) or PYTHON
    try:
        subprocess.run([base, "-m", "venv", str(VENV)], check=True)
        pip = VENV / ("Scripts" if os.name == "nt" else "bin") / "pip"
        subprocess.run([str(pip), "install", "-q", "--disable-pip-version-check", "torchfix"], check=True)
    except (subprocess.CalledProcessError, OSError) as error:
        print(f"  TorchFix unavailable ({error}); its rows are skipped", file=sys.stderr)
        return None
    return [str(script)] if script.exists() else None


# --------------------------------------------------------------------------- sections
def corpus_section(folders: list[Path], repeat: int, torchfix: Optional[list[str]], cores: int,
                   numbers: dict, cache_env: dict, torchfix_repeat: Optional[int] = None) -> str:
    sys.path.insert(0, str(ROOT))
    from ddpify.check.files import python_files

    files = list(python_files(folders))
    count = len(files)
    if not count:
        raise SystemExit(f"no Python files to check in {', '.join(map(str, folders))}: ddpify check honours "
                         ".gitignore, so keep a corpus outside this work tree (see docs/speed.md)")
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    paths = [str(f) for f in folders]
    commands: dict[str, tuple[list[str], dict, Sequence[int]]] = {
        "parse-only, 1 process": ([PYTHON, str(BENCH / "parse_only.py"), *paths, "--jobs", "1"], os.environ.copy(), (0,)),
        f"parse-only, {cores} processes": ([PYTHON, str(BENCH / "parse_only.py"), *paths, "--jobs", str(cores)], os.environ.copy(), (0,)),
        "ddpify check --no-cache -j1": (ddpify_cmd("check", "--no-cache", "-j", "1", "--exit-zero", *paths), os.environ.copy(), (0,)),
        "ddpify check --no-cache": (ddpify_cmd("check", "--no-cache", "--exit-zero", *paths), os.environ.copy(), (0,)),
        "ddpify check (warm cache)": (ddpify_cmd("check", "--exit-zero", *paths), cache_env, (0,)),
    }
    if torchfix:
        commands["torchfix"] = ([*torchfix, *paths], os.environ.copy(), (0, 1))
    run_timed(ddpify_cmd("check", "--exit-zero", *paths), cache_env)  # fill the cache
    results = round_robin(commands, repeat, "corpus", {"torchfix": torchfix_repeat} if torchfix_repeat else None)
    check = results["ddpify check --no-cache"].median
    rows = []
    for name, result in results.items():
        median = result.median
        ratio = f"{median / check:.2f}x" if name != "ddpify check --no-cache" else "1.00x"
        rows.append([f"{name} (n={len(result.times)})", fmt_s(median), f"{count / median:.1f}", f"{1000 * median / count:.1f}", ratio])
    parse_n = results[f"parse-only, {cores} processes"].median
    parse_1 = results["parse-only, 1 process"].median
    numbers["corpus"] = {
        "files": count, "lines": lines, "cores": cores,
        **{name: result.times for name, result in results.items()},
        "check_vs_parse": check / parse_n,
        "check_j1_vs_parse_1": results["ddpify check --no-cache -j1"].median / parse_1,
    }
    if torchfix:
        numbers["corpus"]["torchfix_vs_check"] = results["torchfix"].median / check
    text = table(["command", "median wall", "files/s", "ms/file", "vs ddpify check"], rows)
    return f"### Corpus: {count} files, {lines} lines ({', '.join(paths)}), {cores} cores\n\n{text}\n"


def one_file_section(repeat: int, torchfix: Optional[list[str]], numbers: dict, cache_env: dict, scratch: Path) -> str:
    ddp_script = DATA / "train_ddp.py"
    plain_script = DATA / "train.py"
    out = scratch / "train_converted.py"
    commands: dict[str, tuple[list[str], dict, Sequence[int]]] = {
        'python -c "import libcst"': ([PYTHON, "-c", "import libcst"], os.environ.copy(), (0,)),
        "ddpify check --no-cache FILE": (ddpify_cmd("check", "--no-cache", "--exit-zero", str(ddp_script)), os.environ.copy(), (0,)),
        "ddpify check FILE (warm cache)": (ddpify_cmd("check", "--exit-zero", str(ddp_script)), cache_env, (0,)),
        "ddpify FILE -o OUT": (ddpify_cmd(str(plain_script), "-o", str(out), "-q"), os.environ.copy(), (0,)),
    }
    if torchfix:
        commands["torchfix FILE"] = ([*torchfix, str(ddp_script)], os.environ.copy(), (0, 1))
    run_timed(ddpify_cmd("check", "--exit-zero", str(ddp_script)), cache_env)
    results = round_robin(commands, repeat, "one file")
    base = results['python -c "import libcst"'].median
    tf = results["torchfix FILE"].median if torchfix else float("nan")
    rows = []
    for name, result in results.items():
        rows.append([name, fmt_s(result.median), f"{result.median / base:.2f}x",
                     f"{result.median / tf:.2f}x" if torchfix else "-"])
    numbers["one_file"] = {name: result.times for name, result in results.items()}
    if torchfix:
        numbers["one_file"]["check_vs_torchfix"] = results["ddpify check --no-cache FILE"].median / tf
        numbers["one_file"]["cached_check_vs_torchfix"] = results["ddpify check FILE (warm cache)"].median / tf
    lines_ddp = ddp_script.read_text().count("\n")
    lines_plain = plain_script.read_text().count("\n")
    text = table(["command", "median wall", "vs import libcst", "vs torchfix FILE"], rows)
    return (f"### One file: check on benchmarks/data/train_ddp.py ({lines_ddp} lines), "
            f"convert benchmarks/data/train.py ({lines_plain} lines)\n\n{text}\n")


def cli_section(repeat: int, numbers: dict) -> str:
    commands: dict[str, tuple[list[str], dict, Sequence[int]]] = {
        'python -c "import click"': ([PYTHON, "-c", "import click"], os.environ.copy(), (0,)),
        "ddpify --help": (ddpify_cmd("--help"), os.environ.copy(), (0,)),
        "ddpify --version": (ddpify_cmd("--version"), os.environ.copy(), (0,)),
    }
    results = round_robin(commands, repeat, "cli")
    base = results['python -c "import click"'].median
    imported = subprocess.run([PYTHON, "-X", "importtime", "-m", "ddpify", "--help"], capture_output=True, text=True, cwd=ROOT).stderr
    modules = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in imported.splitlines() if "|" in line}
    heavy = sorted(modules & {"libcst", "torch", "jinja2"})
    rows = [[name, fmt_s(r.median), f"{r.median / base:.2f}x"] for name, r in results.items()]
    numbers["cli"] = {name: r.times for name, r in results.items()}
    numbers["cli"]["help_vs_click"] = results["ddpify --help"].median / base
    numbers["cli"]["version_vs_click"] = results["ddpify --version"].median / base
    numbers["cli"]["heavy_imports"] = heavy
    text = table(["command", "median wall", "vs import click"], rows)
    return f"### Command line start-up\n\n{text}\n\n`ddpify --help` imports libcst/torch/jinja2: {', '.join(heavy) or 'none of them'}\n"


def runtime_section(repeat: int, rounds: int, numbers: dict, scratch: Path) -> str:
    probe = "import time, torch; t = time.perf_counter(); import ddpify.runtime; print(time.perf_counter() - t)"
    inside = []
    for _ in range(repeat):
        output = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT).stdout
        inside.append(float(output.strip().splitlines()[-1]))
    commands: dict[str, tuple[list[str], dict, Sequence[int]]] = {
        'python -c "import torch"': ([PYTHON, "-c", "import torch"], os.environ.copy(), (0,)),
        'python -c "import torch, ddpify.runtime"': ([PYTHON, "-c", "import torch, ddpify.runtime"], os.environ.copy(), (0,)),
    }
    results = round_robin(commands, repeat, "runtime import")
    torch_only = results['python -c "import torch"'].median
    with_runtime = results['python -c "import torch, ddpify.runtime"'].median

    converted = scratch / "train_converted.py"
    subprocess.run(ddpify_cmd(str(DATA / "train.py"), "-o", str(converted), "-q"), check=True, cwd=ROOT)
    torchrun = _tool("torchrun") if (BIN / "torchrun").exists() else [PYTHON, "-m", "torch.distributed.run"]
    steps: dict[str, list[float]] = {"converted by ddpify": [], "hand-written DDP": [], "converted, guard rails off": []}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    env.pop("DDPIFY_GUARDS", None)
    for index in range(rounds):
        order = [("converted by ddpify", converted), ("hand-written DDP", DATA / "train_ddp.py"), ("converted, guard rails off", converted)]
        if index % 2:
            order.reverse()
        for name, script in order:
            cmd = [*torchrun, "--standalone", "--nproc_per_node=2", str(script), *TRAIN_ARGS, "--out-dir", str(scratch / "out")]
            run_env = {**env, "DDPIFY_GUARDS": "0"} if name.endswith("guard rails off") else env
            done = subprocess.run(cmd, capture_output=True, text=True, env=run_env, cwd=ROOT)
            found = re.search(r"step_ms_median=([0-9.]+)", done.stdout)
            if done.returncode != 0 or not found:
                raise SystemExit(f"training run failed: {' '.join(cmd)}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
            steps[name].append(float(found.group(1)))
        print(f"  [runtime steps] round {index + 1}/{rounds}", file=sys.stderr, flush=True)
    conv = statistics.median(steps["converted by ddpify"])
    hand = statistics.median(steps["hand-written DDP"])
    off = statistics.median(steps["converted, guard rails off"])
    numbers["runtime"] = {
        "import_inside_s": inside, "import_torch_s": results['python -c "import torch"'].times,
        "import_torch_runtime_s": results['python -c "import torch, ddpify.runtime"'].times,
        "step_ms": steps, "step_ratio": conv / hand, "import_ms": 1000 * statistics.median(inside),
        "step_ratio_min": min(steps["converted by ddpify"]) / min(steps["hand-written DDP"]),
        "guards_ratio": conv / off,
    }
    rows = [
        ['python -c "import torch"', fmt_s(torch_only), ""],
        ['python -c "import torch, ddpify.runtime"', fmt_s(with_runtime), f"+{1000 * (with_runtime - torch_only):.0f} ms"],
        ["import ddpify.runtime after torch (in process)", f"{1000 * statistics.median(inside):.1f} ms", ""],
        ["train step, hand-written DDP (median of runs)", f"{hand:.1f} ms", "1.00x"],
        ["train step, converted by ddpify (median of runs)", f"{conv:.1f} ms", f"{conv / hand:.3f}x"],
        ["train step, converted, guard rails off (DDPIFY_GUARDS=0)", f"{off:.1f} ms", f"guard rails on: {conv / off:.3f}x"],
        ["train step, least-disturbed run: hand-written / converted",
         f"{min(steps['hand-written DDP']):.1f} / {min(steps['converted by ddpify']):.1f} ms",
         f"{min(steps['converted by ddpify']) / min(steps['hand-written DDP']):.3f}x"],
    ]
    text = table(["measurement", "median", "ratio / delta"], rows)
    return (f"### Runtime (torchrun --nproc_per_node=2, CPU/gloo, {rounds} runs each, "
            f"{' '.join(TRAIN_ARGS)})\n\n{text}\n")


def targets_section(numbers: dict) -> str:
    rows = []

    def add(target: str, measured: Optional[float], limit: float, higher_is_better: bool, unit: str = "x") -> None:
        if measured is None:
            rows.append([target, "not measured", "-"])
            return
        met = measured >= limit if higher_is_better else measured <= limit
        rows.append([target, f"{measured:.2f}{unit}", "met" if met else "MISSED"])

    corpus, one, cli, runtime = (numbers.get(k, {}) for k in ("corpus", "one_file", "cli", "runtime"))
    add("corpus check throughput >= 5x TorchFix", corpus.get("torchfix_vs_check"), TARGETS["corpus_vs_torchfix"], True)
    add(f"corpus check within 3x of parse-only ({corpus.get('cores', '?')} processes each)", corpus.get("check_vs_parse"), TARGETS["corpus_vs_parse"], False)
    add("  (one process each)", corpus.get("check_j1_vs_parse_1"), TARGETS["corpus_vs_parse"], False)
    add("one-file check wall <= 0.35x TorchFix (no cache)", one.get("check_vs_torchfix"), TARGETS["one_file_vs_torchfix"], False)
    add("  (warm cache)", one.get("cached_check_vs_torchfix"), TARGETS["one_file_vs_torchfix"], False)
    if cli:
        add("--help <= 1.5x import click", cli.get("help_vs_click"), TARGETS["help_vs_click"], False)
        add("--version <= 1.5x import click", cli.get("version_vs_click"), TARGETS["help_vs_click"], False)
        rows.append(["--help imports neither libcst nor torch", ", ".join(cli["heavy_imports"]) or "neither",
                     "met" if not {"libcst", "torch"} & set(cli["heavy_imports"]) else "MISSED"])
    add("converted step time <= 1.02x hand-written", runtime.get("step_ratio"), TARGETS["step_vs_hand"], False)
    add("import ddpify.runtime <= 30 ms beyond torch", runtime.get("import_ms"), TARGETS["runtime_import_ms"], False, " ms")
    add("default guard rails <= 1.01x step time", runtime.get("guards_ratio"), TARGETS["guards_vs_off"], False)
    return "### Targets\n\n" + table(["target", "measured", ""], rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="ddpify benchmarks (see the module docstring)")
    parser.add_argument("folders", nargs="*", type=Path, help="code to lint (default: examples/ and tests/fixtures/)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds per table (default 5)")
    parser.add_argument("--rounds", type=int, default=8, help="training runs per script for the step time (default 8)")
    parser.add_argument("--only", default="corpus,one-file,cli,runtime", help="comma-separated sections to run")
    parser.add_argument("--torchfix-repeat", type=int, help="rounds for TorchFix over the folder (default: --repeat; "
                        "it is slow on big corpora)")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--skip-runtime", action="store_true")
    parser.add_argument("--json", type=Path, help="write the raw numbers here")
    args = parser.parse_args()
    folders = [f.resolve() for f in args.folders] or [ROOT / "examples", ROOT / "tests" / "fixtures"]
    for folder in folders:
        if not folder.exists():
            raise SystemExit(f"{folder}: no such folder")
    sys.path.insert(0, str(ROOT))
    from ddpify.check.run import available_cores

    cores = available_cores()
    torchfix = None if args.skip_torchfix else ensure_torchfix()
    numbers: dict = {"python": sys.version.split()[0], "cores": cores, "repeat": args.repeat}
    sections = []
    with tempfile.TemporaryDirectory(prefix="ddpify-bench-") as scratch_name:
        scratch = Path(scratch_name)
        cache_env = {**os.environ, "DDPIFY_CACHE_DIR": str(scratch / "cache")}
        only = {name.strip() for name in args.only.split(",")}
        if "corpus" in only:
            sections.append(corpus_section(folders, args.repeat, torchfix, cores, numbers, cache_env, args.torchfix_repeat))
            print(sections[-1], flush=True)
        if "one-file" in only:
            sections.append(one_file_section(args.repeat, torchfix, numbers, cache_env, scratch))
            print(sections[-1], flush=True)
        if "cli" in only:
            sections.append(cli_section(max(args.repeat, 9), numbers))
            print(sections[-1], flush=True)
        if "runtime" in only and not args.skip_runtime:
            sections.append(runtime_section(max(args.repeat, 7), args.rounds, numbers, scratch))
            print(sections[-1], flush=True)
    print(targets_section(numbers), flush=True)
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2))


if __name__ == "__main__":
    main()

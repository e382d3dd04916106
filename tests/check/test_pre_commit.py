"""The real pre-commit tool with ddpify's hook from this repository, in throw-away git
repositories: ``pre-commit try-repo`` refuses a staged DDP bug with its rule code; an installed
hook refuses ``git commit`` of the bug and lets the fixed file through; the hook's environment
has no torch; the README's two snippets run as documented (a local clone stands in for the URL,
so no network is needed) and fail these tests, never skip them, when they do not."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = re.findall(r"```yaml\n(repos:.*?)```", (ROOT / "README.md").read_text(), re.S)
# DDP001 (a default rule): the epoch loop never calls set_epoch.
BUGGY = (
    "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n\n"
    "loader = DataLoader(data, sampler=DistributedSampler(data))\nfor epoch in range(3):\n    for batch in loader:\n        pass\n"
)
CLEAN = BUGGY.replace("for epoch in range(3):\n", "for epoch in range(3):\n    loader.sampler.set_epoch(epoch)\n")


def _git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The hook as committed (what users get from a rev), not a half-edited work tree."""
    clone = tmp_path_factory.mktemp("ddpify") / "repo"
    assert _git("clone", "-q", str(ROOT), str(clone), cwd=ROOT).returncode == 0
    rev = _git("rev-parse", "HEAD", cwd=clone).stdout.strip()
    return clone, rev


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def _new_repo(path: Path, content: str) -> Path:
    path.mkdir()
    _git("init", "-q", cwd=path)
    (path / "train.py").write_text(content)
    _git("add", "train.py", cwd=path)
    return path


def test_try_repo_refuses_a_staged_ddp_bug(tmp_path: Path, hook_repo: tuple[Path, str], env: dict[str, str]) -> None:
    repo = _new_repo(tmp_path / "buggy", BUGGY)
    result = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo[0]), "ddpify-check"],
                            cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:5:1: DDP001" in result.stdout


def test_installed_hook_guards_commits_without_torch(tmp_path: Path, hook_repo: tuple[Path, str], env: dict[str, str]) -> None:
    repo = _new_repo(tmp_path / "project", BUGGY)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo[0]}\n  rev: {hook_repo[1]}\n  hooks:\n  - id: ddpify-check\n"
    )
    _git("add", ".pre-commit-config.yaml", cwd=repo)
    install = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    env = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}

    refused = _git("commit", "-m", "bug", cwd=repo, env=env)
    assert refused.returncode != 0 and "DDP001" in refused.stdout + refused.stderr
    (repo / "train.py").write_text(CLEAN)
    _git("add", "train.py", cwd=repo)
    accepted = _git("commit", "-m", "fixed", cwd=repo, env=env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr

    pythons = list(Path(env["PRE_COMMIT_HOME"]).glob("repo*/py_env-*/bin/python"))
    assert pythons, "pre-commit built no environment for the hook"
    for python in pythons:
        probe = subprocess.run([str(python), "-c", "import ddpify.cli, libcst, click, jinja2\nimport torch"],
                               capture_output=True, text=True)
        assert "No module named 'torch'" in probe.stderr, probe.stderr


def _pre_commit(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_readme_snippet_with_a_commit_sha_runs(tmp_path: Path, hook_repo: tuple[Path, str], env: dict[str, str]) -> None:
    """The README's snippet with its placeholders filled in as it says: the URL (here a local
    clone) and ``COMMIT_SHA`` (a commit; ``pre-commit autoupdate`` writes the same one)."""
    clone, head = hook_repo
    snippet = SNIPPETS[0]
    (url,) = re.findall(r"^\s*- repo: (\S+)", snippet, re.M)
    assert "rev: COMMIT_SHA" in snippet, "the snippet's rev is no longer the documented placeholder"
    repo = _new_repo(tmp_path / "project", BUGGY)
    config = repo / ".pre-commit-config.yaml"
    config.write_text(snippet.replace(url, str(clone)).replace("COMMIT_SHA", head))
    result = _pre_commit("run", "--all-files", cwd=repo, env=env)
    assert result.returncode == 1 and "train.py:5:1: DDP001" in result.stdout, result.stdout + result.stderr

    config.write_text(snippet.replace(url, str(clone)))
    updated = _pre_commit("autoupdate", cwd=repo, env=env)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert re.findall(r"rev: (\S+)", config.read_text()) == [head]


def test_readme_local_hook_runs_the_installed_ddpify(tmp_path: Path, env: dict[str, str]) -> None:
    repo = _new_repo(tmp_path / "project", BUGGY)
    (repo / ".pre-commit-config.yaml").write_text(SNIPPETS[1])
    env = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    result = _pre_commit("run", "--all-files", cwd=repo, env=env)
    assert result.returncode == 1 and "train.py:5:1: DDP001" in result.stdout, result.stdout + result.stderr
    (repo / "train.py").write_text(CLEAN)
    assert _pre_commit("run", "--all-files", cwd=repo, env=env).returncode == 0

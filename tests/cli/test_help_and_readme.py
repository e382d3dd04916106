"""``ddpify --help`` lists every command and the convert options in full, untruncated; the
README's command-line documentation names exactly the options ``--help`` has; the exit codes
are documented in both; the pre-commit snippet's ``rev`` is a commit placeholder (no tags exist)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from ddpify.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _help(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "ddpify", *args, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _flat(text: str) -> str:
    return " ".join(text.split())


def _options(command: click.Command) -> set[str]:
    """The long names (or the only name) of a command's options, --help excepted."""
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option):
            longs = [o for o in param.opts if o.startswith("--")]
            names.add(longs[0] if longs else param.opts[0])
    return names


def _section(start: str, end: str) -> str:
    return README[README.index(start) : README.index(end, README.index(start))]


def _mentioned(text: str, command: click.Command) -> set[str]:
    """The options of ``command`` that ``text`` names by any of their spellings."""
    found = set()
    for param in command.params:
        if isinstance(param, click.Option) and any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text) for o in param.opts):
            longs = [o for o in param.opts if o.startswith("--")]
            found.add(longs[0] if longs else param.opts[0])
    return found


def test_top_level_help_lists_every_command_in_full() -> None:
    text = _flat(_help())
    for name, command in main.commands.items():
        assert name in text
        assert _flat(command.get_short_help_str(limit=10_000)) in text, name
        assert "..." not in command.get_short_help_str(limit=10_000), f"{name}: click truncated it"


def test_top_level_help_shows_the_convert_options_in_full() -> None:
    text = _flat(_help())
    convert = main.commands["convert"]
    for param in convert.params:
        if isinstance(param, click.Option):
            assert ", ".join(param.opts) in text
            assert _flat(param.help or "") in text, param.name


@pytest.mark.parametrize("command", ["convert", "check", "launch-script"])
def test_readme_documents_exactly_the_options_of_help(command: str) -> None:
    cli_command = main.commands[command]
    section = _section("## The command line", "## What the conversion does")
    if command == "convert":
        table = "\n".join(line.split("|")[1] for line in section.splitlines() if line.startswith("| `"))
        documented = {name for name in re.findall(r"`(-[\w-]+)", table)}
        documented = {o for o in documented if o != "-"}
        helped = {o for p in cli_command.params if isinstance(p, click.Option) for o in p.opts}
        assert documented == helped
    elif command == "check":
        usage = _section("## Keeping DDP scripts correct", "ddpify rules ")
        assert _mentioned(usage, cli_command) == _options(cli_command)
    else:
        usage = section[section.index("ddpify launch-script") : section.index("```", section.index("ddpify launch-script"))]
        assert _mentioned(usage, cli_command) == _options(cli_command)
    helped_text = _flat(_help(command))
    for option in _options(cli_command):
        assert option in helped_text


def test_readme_names_every_command() -> None:
    block = _section("## The command line", "`ddpify SRC...` is short for")
    for name in main.commands:
        if name != "convert":
            assert f"ddpify {name}" in block, name
    assert "`ddpify SRC...` is short for `ddpify convert SRC...`" in README


def test_exit_codes_are_documented_in_help_and_readme() -> None:
    for text in (_flat(_help()), _flat(_help("convert")), _flat(_help("check"))):
        assert "2 bad input" in text or "2 error" in text
        assert "3 internal error" in text and "130 interrupted" in text
    assert "1 findings (check)" in _flat(_help())
    readme = _flat(README)
    for code in ("`0` done", "`1` findings", "`2` bad input", "`3` internal error", "`130` interrupted"):
        assert code in readme, code


def test_pre_commit_snippets_name_a_commit_placeholder_and_real_hooks() -> None:
    """The repository has no tags, so a tag as ``rev`` cannot work: the snippet documents a
    commit sha to fill in (tests/check/test_pre_commit.py runs it with a local clone)."""
    snippets = re.findall(r"```yaml\n(repos:.*?)```", README, re.S)
    assert len(snippets) == 2
    remote, local = snippets
    (rev,) = re.findall(r"^\s*rev: (\S+)", remote, re.M)
    assert rev == "COMMIT_SHA" and "pre-commit autoupdate" in README
    assert "rev:" not in local and "repo: local" in local
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    for hook in re.findall(r"- id: ([\w-]+)", remote) + re.findall(r"# or ([\w-]+)", remote):
        assert f"- id: {hook}\n" in hooks, hook


def test_help_and_version_stay_light() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from ddpify.cli import main\n"
        "for args in (['--version'], ['--help'], ['convert', '--help'], ['check', '--help']):\n"
        "    assert CliRunner().invoke(main, args).exit_code == 0, args\n"
        "heavy = [m for m in ('torch', 'libcst', 'jinja2', 'json', 'ddpify.notebook', 'ddpify.check.rules') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr

"""Properties that hold for any input, checked on generated programs and on every fixture.

For ``convert_source``: it raises nothing but DdpifyError; its output parses (with libcst, and
with Python's own parser whenever the input did); converting the output again changes
nothing; a program with no training code comes back byte-identical. For
``check_source``: nothing but DdpifyError, on the input and on the converted output; fixes
give code that parses, and fixing the fixed code changes nothing.

Programs come from hypothesmith (grammar- and libcst-based generators), alone and embedded
at several places of a small training scaffold, and from a generator of shuffled training
fragments (loaders, models, optimizers, saves, DataParallel, .cuda(), seeds, prints) at
random nesting. Bounded to a few seconds: ~50 examples each, no deadline, no example database.
"""

from __future__ import annotations

import ast
import textwrap
import warnings
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ddpify.api import convert_source
from ddpify.check.engine import check_source
from ddpify.convert import names
from ddpify.errors import DdpifyError

ROOT = Path(__file__).resolve().parents[2]
BOUNDED = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code like `1()`


def _python_parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return True
    except (SyntaxError, ValueError):
        return False


def _libcst_parses(text: str) -> bool:
    try:
        cst.parse_module(text)
        return True
    except (cst.ParserSyntaxError, RecursionError):
        return False


def assert_convert_properties(source: str, *, twice: bool = True, **options: bool) -> str | None:
    """The converter's properties; returns the output (None when refused)."""
    try:
        result = convert_source(source, **options)
    except DdpifyError as error:
        assert str(error) and "\n" not in str(error)
        return None
    output = result.output
    assert _libcst_parses(output)
    if _python_parses(source):
        assert _python_parses(output), "valid Python in, invalid Python out"
    if twice:
        assert convert_source(output, **options).output == output, "converting twice differs from once"
    if not names.may_have_training_code(source):
        assert output == source and not result.changes
    return output


def assert_check_properties(source: str) -> None:
    try:
        fixed = check_source(source, fix=True, unsafe_fixes=True).fixed  # findings computed too
    except DdpifyError as error:
        assert str(error) and "\n" not in str(error)
        return
    if fixed is not None:
        assert _libcst_parses(fixed)
        if _python_parses(source):
            assert _python_parses(fixed)
        assert check_source(fixed, fix=True, unsafe_fixes=True).fixed is None, "fixing twice differs from once"


# --- generated programs --------------------------------------------------------------------

PRELUDE = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
"""
DDP_PRELUDE = PRELUDE + """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
dist.init_process_group("gloo")
"""
TRAINING_TAIL = """\
loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)
model = nn.Linear(1, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for batch in loader:
        print(epoch)
        optimizer.zero_grad()
        model(batch.float().unsqueeze(1).cuda()).sum().backward()
        optimizer.step()
torch.save(model.state_dict(), "m.pt")
"""


def _embed(body: str, where: str) -> str:
    if not body.endswith("\n"):
        body += "\n"
    if where == "bare":
        return body
    if where == "module":
        return PRELUDE + body + TRAINING_TAIL
    if where == "function":
        return PRELUDE + "def helper():\n" + textwrap.indent(body, "    ") + "    pass\n" + TRAINING_TAIL
    if where == "epoch-loop":
        loop = TRAINING_TAIL.replace("    for batch in loader:\n", textwrap.indent(body, "    ") + "    for batch in loader:\n")
        return PRELUDE + loop
    # inside the main guard, after the training code
    return PRELUDE + "if __name__ == '__main__':\n" + textwrap.indent(TRAINING_TAIL + body, "    ")


generated = st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())
programs = st.builds(_embed, generated, st.sampled_from(["bare", "module", "function", "epoch-loop", "main-guard"]))


@BOUNDED
@given(programs, st.booleans(), st.booleans())
def test_generated_programs_convert_safely(source: str, per_process_batch: bool, annotate: bool) -> None:
    assume(_libcst_parses(source))
    output = assert_convert_properties(source, per_process_batch=per_process_batch, annotate=annotate)
    assert_check_properties(source)
    if output is not None and output != source:
        assert_check_properties(output)


def test_unparsable_generated_text_is_refused_in_one_line() -> None:
    for text in ("def f(:\n", "x = (1,\n", "\tif x:\n  pass\n", "lambda: (yield)\n" * 0 + "class\n"):
        with pytest.raises(DdpifyError):
            convert_source(text)
        with pytest.raises(DdpifyError):
            check_source(text)


# --- shuffled training fragments -----------------------------------------------------------

FRAGMENTS = [
    "{loader} = DataLoader({data}, batch_size={n}, shuffle={flag})",
    "{loader} = torch.utils.data.DataLoader({data}, **{kwargs})",
    "{kwargs} = {{'batch_size': {n}, 'shuffle': {flag}}}",
    "{loader} = DataLoader({data}, sampler=torch.utils.data.RandomSampler({data}))",
    "{model} = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))",
    "{model} = {model}.to(device)",
    "{model} = {model}.cuda()",
    "{model} = nn.DataParallel({model})",
    "{model} = DDP({model}, device_ids=[local_rank])",
    "{loader} = DataLoader({data}, sampler=DistributedSampler({data}), shuffle={flag})",
    "if dist.get_rank() == 0:\n    torch.save({model}.state_dict(), 'best.pt')",
    "{model} = nn.SyncBatchNorm.convert_sync_batchnorm({model})",
    "if torch.cuda.device_count() > 1:\n    {model} = nn.DataParallel({model})",
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
    "{opt} = torch.optim.Adam({model}.parameters(), lr=1e-3)",
    "{opt} = torch.optim.SGD(list({model}.parameters()) + list({other}.parameters()), lr=0.1)",
    "sched = torch.optim.lr_scheduler.OneCycleLR({opt}, 0.1, total_steps=len({loader}) * 3)",
    "torch.manual_seed({n})",
    "torch.save({model}.state_dict(), 'ckpt_{n}.pt')",
    "torch.save({{'model': {model}.module.state_dict(), 'opt': {opt}.state_dict()}}, 'all.pt')",
    "{model}.load_state_dict(torch.load('ckpt_{n}.pt'))",
    "print({model}, {n})",
    "for epoch in range({n}):\n    for x in {loader}:\n        {opt}.zero_grad()\n        {model}(x).sum().backward()\n        {opt}.step()",
    "for step, x in enumerate({loader}):\n    if step > {n}:\n        break",
    "with torch.no_grad():\n    {model}.eval()",
    "{model}.requires_grad_(False)",
    "{model} = torch.compile({model})",
    "scaler = torch.cuda.amp.GradScaler()",
    "def {fn}({model}, {loader}):\n    for x in {loader}:\n        {model}(x)\n    return {model}",
    "class {cls}:\n    def __init__(self):\n        self.{model} = nn.Linear(1, 1)\n        self.{opt} = torch.optim.SGD(self.{model}.parameters(), 0.1)",
]
identifiers = st.sampled_from(["model", "net", "G", "D", "loader", "train_loader", "val_loader", "data", "kw", "opt", "f"])


@st.composite
def fragment_scripts(draw: st.DrawFn) -> str:
    lines = [draw(st.sampled_from([PRELUDE, DDP_PRELUDE]))]  # a single-GPU script or a (buggy) DDP one
    for _ in range(draw(st.integers(1, 12))):
        template = draw(st.sampled_from(FRAGMENTS))
        fields = {k: draw(identifiers) for k in ("loader", "data", "kwargs", "model", "other", "opt", "fn", "cls")}
        fields["cls"] = fields["cls"].capitalize()
        code = template.format(n=draw(st.integers(0, 5)), flag=draw(st.sampled_from(["True", "False", "flag"])), **fields)
        wrapper = draw(st.sampled_from(["", "def main():\n", "if __name__ == '__main__':\n", "if flag:\n", "with ctx:\n"]))
        lines.append(wrapper + (textwrap.indent(code, "    ") if wrapper else code) + "\n")
    return "".join(lines)


@settings(BOUNDED, max_examples=30)
@given(fragment_scripts(), st.booleans())
def test_shuffled_training_fragments_convert_safely(source: str, annotate: bool) -> None:
    assert _libcst_parses(source) and _python_parses(source)
    output = assert_convert_properties(source, annotate=annotate)
    assert output is not None or source.startswith(DDP_PRELUDE), "valid Python must convert (a DDP script is refused)"
    assert_check_properties(source)
    if output is not None and output != source:
        assert_check_properties(output)


def test_reconversion_of_conditional_device_is_idempotent() -> None:
    source = PRELUDE + "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n" + TRAINING_TAIL
    once = convert_source(source, annotate=True)
    twice = convert_source(once.output, annotate=True)
    assert twice.output == once.output and twice.manual == once.manual


# --- every fixture and example -------------------------------------------------------------

FILES = sorted(ROOT.glob("tests/fixtures/convert/*/input.py")) + sorted(ROOT.glob("examples/*/train.py"))


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_fixtures_and_examples_convert_and_check_safely(path: Path) -> None:
    source = _read(path)
    # test_golden already converts every fixture twice; the examples are converted twice here
    output = assert_convert_properties(source, twice=path.name == "train.py")
    assert output is not None
    assert_check_properties(source)
    if output != source:
        assert_check_properties(output)


def test_there_are_files_to_check() -> None:
    assert len(FILES) >= 20

"""Generated programs of adversarial shape for the cost of ddpify's analyses over calls.

Every shape is a valid script of ``size`` repeated units followed by a short training loop, so
convert and check run all their analyses on it. The shapes are the ones that made call-graph
walks explode before the analyses became per-function fixpoints (issue 22):

- ``methods``: classes whose same-named methods (``apply`` / ``get``) call each other through
  attributes, as transform, layer and model libraries do (one cycle through every class), one
  method (of one class, called from every class) prompting with ``input()`` and one downloading a
  dataset;
- ``chain``: ``f0`` calls ``f1`` ... calls ``f{n-1}``, each under a rank test or not;
- ``lattice``: layers of two functions, each calling both functions of the next layer (2^n paths);
- ``recursion``: a ring of mutually recursive functions entered once;
- ``hierarchy``: a deep class hierarchy whose methods call ``super()`` and each other;
- ``nested``: classes whose methods each define a function of the same name (``inner``),
  called by that name under a rank test read from an options dict (a local name: it matches
  its own scope's function only), and whose same-named methods call each other;
- ``decorated``: classes whose same-named methods call each other through attributes, each
  method behind a rank decorator of the file (``@main_only``, read from its code) and each
  class setting a rank flag on the options it is handed (``opt.log``) that guards a print;
- ``reloads``: classes whose same-named methods call each other, each reading back a checkpoint
  that a save under a clock-decided test writes without waiting (every ``.load(`` is a caller of
  every ``load``);
- ``metrics``: classes whose same-named ``run`` methods each train, add up a running loss and
  return it, each result compared by one caller (by name, every ``.run(`` is a caller of every
  ``run``; the methods do not call each other: a ring of them through ``self.inner.run(...)``
  makes the per-test value origins of the divergence analysis walk the ring, 1.4x per line
  from 12 to 48 classes, noted in issue 21);
- ``module_runs``: classes whose same-named ``run`` methods each train on ``self.model`` and call
  ``self.run`` again, each built and run at module level and its result tested next to a rank
  test (every ``.run(`` calls every ``run``; a module body of many statements: 600 classes took
  8.5 s to check, 1200 classes 38 s, before the call sites, callers, early exits and optimizer
  lookups were indexed once per file);
- ``handed_values``: classes whose same-named ``step`` methods print a parameter, seed torch and
  hand the parameter on to their own ``run`` and to the next class's ``step`` (an instance built
  in place) and to ``self.inner.step``; matched by name alone, every ``.step(`` was a caller of
  every ``step`` and each printed parameter weighed every call's value (800 classes took 13 s to
  check, 1600 classes 29 s, before calls were narrowed by their receivers).

    python benchmarks/shapes.py SHAPE SIZE        # prints the program
"""

from __future__ import annotations

import sys

TRAINING = '''

def train():
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4, shuffle=True)
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    print("done", entry(epoch))
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    train()
'''

HEADER = """import os

import torch
import torchvision
from torch.utils.data import DataLoader, TensorDataset

"""


def _methods(size: int) -> str:
    units = []
    for i in range(size):
        other = (i + 1) % size
        units.append(f'''
class Transform{i}:
    def __init__(self, inner=None):
        self.inner = inner or Transform{other}.__new__(Transform{other})

    def apply(self, x):
        if os.environ.get("RANK", "0") == "0":
            print("apply {i}")
        return self.inner.get(x) + self.inner.apply(x) + self.inner.ask() + self.inner.fetch()

    def get(self, x):
        return self.inner.apply(x) * self.get_scale()

    def get_scale(self):
        return self.inner.get_scale() if x else {i}
''' + ('\n    def ask(self):\n        return input("scale? ") or self.inner.get_scale()\n' if i == 0 else "")
               + ('\n    def fetch(self):\n        return torchvision.datasets.MNIST("data", download=True) or self.inner.fetch()\n' if i == 0 else ""))
    return "".join(units) + "\n\ndef entry(x):\n    return Transform0().apply(x)\n"


def _chain(size: int) -> str:
    units = []
    for i in range(size):
        call = f"f{i + 1}(x)" if i + 1 < size else "x"
        guard = 'if int(os.environ.get("RANK", "0")) == 0:\n        print(x)\n    ' if i % 3 == 0 else ""
        units.append(f"\ndef f{i}(x):\n    {guard}return {call}\n")
    return "".join(units) + "\n\ndef entry(x):\n    return f0(x)\n"


def _lattice(size: int) -> str:
    units = []
    for i in range(size):
        body = f"a{i + 1}(x) + b{i + 1}(x)" if i + 1 < size else "x"
        for name in (f"a{i}", f"b{i}"):
            units.append(f'\ndef {name}(x):\n    if x:\n        print("{name}")\n    return {body}\n')
    return "".join(units) + "\n\ndef entry(x):\n    return a0(x) + b0(x)\n"


def _recursion(size: int) -> str:
    units = []
    for i in range(size):
        nxt, prev = (i + 1) % size, (i - 1) % size
        units.append(f'\ndef r{i}(x):\n    if x > 0:\n        print("r{i}")\n        return r{nxt}(x - 1) + r{prev}(x - 2)\n    return 0\n')
    return "".join(units) + "\n\ndef entry(x):\n    return r0(x)\n"


def _hierarchy(size: int) -> str:
    units = ["\nclass Base0:\n    def step(self, x):\n        return x\n\n    def run(self, x):\n        return self.step(x)\n"]
    for i in range(1, size):
        units.append(f'''
class Base{i}(Base{i - 1}):
    def step(self, x):
        print("step {i}")
        return super().step(x) + self.run(x - 1)

    def run(self, x):
        return super().run(x) if x else self.step(x)
''')
    return "".join(units) + f"\n\ndef entry(x):\n    return Base{size - 1}().run(x)\n"


def _nested(size: int) -> str:
    units = []
    for i in range(size):
        units.append(f'''
class Runner{i}:
    def run(self, x):
        def inner():
            return self.other.run(x)

        if self.opt["rank"] == 0:
            print(inner())
        return self.step(x)

    def step(self, x):
        return self.run(x - 1) if x else {i}
''')
    return "".join(units) + "\n\ndef entry(x):\n    return Runner0().run(x)\n"


def _decorated(size: int) -> str:
    units = [
        "\ndef main_only(func):\n    def wrapper(*args, **kwargs):\n        if os.environ.get(\"RANK\", \"0\") == \"0\":\n"
        "            return func(*args, **kwargs)\n    return wrapper\n"
    ]
    for i in range(size):
        other = (i + 1) % size
        units.append(f'''
class Logger{i}:
    def __init__(self, inner=None):
        self.inner = inner or Logger{other}.__new__(Logger{other})

    def setup(self, opt):
        if os.environ.get("RANK", "0") == "0":
            opt.log = True
        else:
            opt.log = False
        return self.inner.setup(opt)

    @main_only
    def log(self, x, opt):
        if opt.log:
            print("log {i}")
        return self.inner.log(x, opt) + self.inner.setup(opt)
''')
    return "".join(units) + "\n\ndef entry(x):\n    return Logger0().log(x, None)\n"


def _reloads(size: int) -> str:
    units = []
    for i in range(size):
        other = (i + 1) % size
        units.append(f'''
class Restore{i}:
    def __init__(self):
        self.inner = Restore{other}.__new__(Restore{other})

    def load(self, model):
        self.inner.load(model)
        return torch.load("best.pt")
''')
    save = '\n\ndef entry(x):\n    if time.time() % 2 > 1:\n        torch.save({"x": x}, "best.pt")\n    return Restore0().load(x)\n'
    return "import time\n" + "".join(units) + save


def _metrics(size: int) -> str:
    units = []
    for i in range(size):
        units.append(f'''
class Fit{i}:
    def run(self, model, batches, optimizer):
        total_loss = 0.0
        for x, y in batches:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        return total_loss / len(batches)
''')
    calls = "".join(f"    loss{i} = Fit{i}().run(x, x, x)\n    if loss{i} < 1:\n        print({i})\n" for i in range(size))
    return "".join(units) + "\n\ndef entry(x):\n" + calls + "    return x\n"


def _module_runs(size: int) -> str:
    units = []
    for i in range(size):
        units.append(f'''
class Step{i}:
    def run(self, batches):
        total_loss = 0.0
        for x in batches:
            loss = self.model(x)
            loss.backward()
            total_loss += loss.item()
        self.run(batches)
        return total_loss
''')
    calls = "".join(f"r{i} = Step{i}().run(batches)\nif os.environ.get('RANK') == '0' and r{i} < 1:\n    print({i})\n" for i in range(size))
    return "".join(units) + "\n\nbatches = []\n" + calls


def _handed_values(size: int) -> str:
    units = []
    for i in range(size):
        other = (i + 1) % size
        units.append(f'''
class Stage{i}(torch.nn.Module):
    def step(self, x, verbose):
        torch.manual_seed({i})
        if verbose:
            print(x)
        return self.run(x, verbose) + Stage{other}().step(x, verbose) + self.inner.step(x, False)

    def run(self, x, verbose):
        print(verbose)
        return self.step(x, verbose)
''')
    return "".join(units) + "\n\ndef entry(x):\n    return Stage0().step(x, True)\n"


SHAPES = {
    "decorated": _decorated,
    "methods": _methods,
    "chain": _chain,
    "lattice": _lattice,
    "recursion": _recursion,
    "hierarchy": _hierarchy,
    "nested": _nested,
    "reloads": _reloads,
    "metrics": _metrics,
    "module_runs": _module_runs,
    "handed_values": _handed_values,
}


def program(shape: str, size: int) -> str:
    """The script of ``size`` units of ``shape`` and the training loop."""
    return HEADER + SHAPES[shape](size) + TRAINING


if __name__ == "__main__":
    print(program(sys.argv[1], int(sys.argv[2])), end="")

"""Which methods a call may run, narrowed by its receiver (``analysis.name_calls``): ``self.f``
in a class that has ``f`` runs that ``f`` or a subclass's override, never another class's;
``super().f`` a base's; ``Trainer.f`` / ``Trainer().f`` the class's own or inherited ``f``; an
unknown receiver every ``f`` while there are few, none past ``AMBIGUOUS``."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.name_calls import PAIRS
from tests.analysis.conftest import analyse

CLASSES = """
class Base:
    def step(self):
        return self.run()

    def run(self):
        return 0


class Child(Base):
    def run(self):
        return super().run() + 1


class Other:
    def run(self):
        return self.step()

    def step(self):
        return 2


def main(thing):
    Child().step()
    Other.run(None)
    thing.run()
"""


def _owner(function: cst.FunctionDef, source) -> str:
    klass = source.enclosing_class(function)
    return f"{klass.name.value if klass else ''}.{function.name.value}"


def _targets(text: str, spelled: str) -> list[str]:
    source = analyse(text).source
    calls = [c for c in source.of_types(cst.Call) if cst.Module([]).code_for_node(c) == spelled]
    assert calls, spelled
    return sorted(_owner(f, source) for f in source.functions_called(calls[0]))


def test_self_runs_the_class_own_or_an_override_here_not_another_class() -> None:
    assert _targets(CLASSES, "self.run()") == ["Base.run", "Child.run"]
    assert _targets(CLASSES, "self.step()") == ["Other.step"]


def test_super_runs_the_base_method() -> None:
    assert _targets(CLASSES, "super().run()") == ["Base.run"]


def test_a_class_of_this_file_as_receiver_runs_its_own_or_inherited_method() -> None:
    assert _targets(CLASSES, "Child().step()") == ["Base.step"]
    assert _targets(CLASSES, "Other.run(None)") == ["Other.run"]


def test_an_unknown_receiver_matches_every_method_of_the_name() -> None:
    assert _targets(CLASSES, "thing.run()") == ["Base.run", "Child.run", "Other.run"]


def test_call_sites_are_the_inverse_without_own_recursion() -> None:
    source = analyse(CLASSES).source
    base_run = next(f for f in source.functions["run"] if _owner(f, source) == "Base.run")
    sites = sorted(cst.Module([]).code_for_node(c) for c in source.call_sites(base_run))
    assert sites == ["self.run()", "super().run()", "thing.run()"]


MIXIN = """
class Base:
    def run(self, rank):
        self.log("hello", verbose=rank == 0)

    def log(self, msg, verbose=False):
        pass


class LogMixin:
    def log(self, msg, verbose=False):
        if verbose:
            print(msg)


class Trainer(LogMixin, Base):
    pass
"""


def test_a_mixin_of_a_subclass_may_run_a_self_call() -> None:
    """``Trainer(LogMixin, Base)``: ``self.log`` in ``Base`` runs ``LogMixin.log`` first."""
    assert _targets(MIXIN, 'self.log("hello", verbose=rank == 0)') == ["Base.log", "LogMixin.log"]


def test_below_the_bound_many_same_named_methods_are_all_matched() -> None:
    many = "".join(f"\nclass Logger{i}:\n    def log(self, msg, verbose=False):\n        pass\n" for i in range(17))
    assert len(_targets(many + "\n\ndef main(logger):\n    logger.log('x')\n", "logger.log('x')")) == 17


def test_past_the_bound_an_unknown_receiver_matches_nothing_and_self_still_its_own() -> None:
    classes = int((PAIRS / 2) ** 0.5) + 1  # classes x 2 calls each x classes methods > PAIRS
    many = "".join(f"\nclass C{i}:\n    def run(self, x):\n        return self.run(x) + x.run()\n" for i in range(classes))
    source = analyse(many).source
    for call in source.of_types(cst.Call):
        spelled = cst.Module([]).code_for_node(call)
        targets = source.functions_called(call)
        if spelled == "x.run()":
            assert targets == []
        else:
            assert [source.enclosing_class(t) for t in targets] == [source.enclosing_class(call)]

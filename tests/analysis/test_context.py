"""``ddpify.analysis.context``: which ranks, branch and process run a statement."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddpify.analysis.context import Process, is_main_guard
from ddpify.analysis.ranks import Branch, RankSelection
from tests.analysis.conftest import analyse

S = RankSelection
PROLOGUE = "import os\nimport torch\nimport torch.distributed as dist\nimport torch.multiprocessing as mp\n"


def calls(source: str, name: str = "mark") -> tuple[object, list[cst.Call]]:
    """The analysis of ``source`` and its calls of ``name`` (``mark(1)``, ``mark(2)``...)."""
    analysis = analyse(PROLOGUE + textwrap.dedent(source))
    found = [c for c in analysis.source.calls_by_callee.get(name, []) if isinstance(c.func, cst.Name)]
    return analysis, found


def selections(source: str) -> list[RankSelection]:
    analysis, found = calls(source)
    return [analysis.context.selection(c) for c in found]  # type: ignore[attr-defined]


def test_enclosing_if_and_else() -> None:
    source = """\
    mark(0)
    if rank == 0:
        mark(1)
        if epoch % 2 == 0:
            mark(2)
    else:
        mark(3)
    if local_rank == 0:
        mark(4)
    elif rank == 1:
        mark(5)
    """
    assert selections(source) == [S.ALL, S.MAIN, S.MAIN, S.NOT_MAIN, S.LOCAL_MAIN, S.OTHER]


def test_conditional_expressions_and_boolean_operators() -> None:
    source = """\
    writer = mark(1) if rank == 0 else None
    rank == 0 and mark(2)
    rank != 0 or mark(3)
    x = [mark(4) for _ in range(3)] if dist.get_rank() == 0 else []
    """
    assert selections(source) == [S.MAIN, S.MAIN, S.MAIN, S.MAIN]


@pytest.mark.parametrize(
    "exit_",
    ["return", "return None", "raise SystemExit", "sys.exit(0)", "exit()"],
)
def test_early_exit_leaves_the_rest_to_main(exit_: str) -> None:
    source = f"""\
    import sys

    def report(rank):
        mark(0)
        if rank != 0:
            {exit_}
        mark(1)
        for x in y:
            mark(2)
    """
    assert selections(source) == [S.ALL, S.MAIN, S.MAIN]


def test_continue_in_a_loop_and_exit_in_else() -> None:
    source = """\
    def loop(rank):
        for batch in loader:
            if not is_main_process():
                continue
            mark(1)
        mark(2)
        if rank == 0:
            pass
        else:
            return
        mark(3)
    """
    assert selections(source) == [S.MAIN, S.ALL, S.MAIN]


@pytest.mark.parametrize(
    "nested",
    [
        # adaptive-span main.py: reduce to rank 0, the other ranks leave, rank 0 prints
        "if distributed:\n    dist.reduce(stats, 0)\n    if env['rank'] == 0:\n        loss = stats[0]\n    else:\n        return",
        "if args.distributed:\n    if rank != 0:\n        return\n    loss = reduce(loss)",
        "if world_size > 1:\n    if dist.get_rank() > 0:\n        return",
        "if args.distributed:\n    if rank == 0:\n        pass\n    elif args.quiet:\n        return\n    else:\n        return",
    ],
)
def test_an_exit_nested_in_another_test_leaves_the_rest_to_main(nested: str) -> None:
    source = "def main(args, env, rank, distributed, world_size, stats):\n" + textwrap.indent(f'dist.init_process_group("gloo")\n{nested}\nmark(1)\n', "    ")
    assert selections(source) == [S.MAIN]


def test_an_exit_nested_in_a_test_of_the_run_lets_every_rank_through() -> None:
    source = """\
    def main(args, rank):
        dist.init_process_group("gloo")
        if args.resume:
            if not os.path.exists(args.resume):
                return
        mark(1)
        if args.eval:
            if rank == 0:
                evaluate()
            return
        mark(2)
    """
    assert selections(source) == [S.ALL, S.ALL]


def test_an_unrelated_early_exit_changes_nothing() -> None:
    source = """\
    def f():
        if not os.path.exists(path):
            return
        mark(1)
        if rank == 0:
            pass
        else:
            mark(2)
    """
    assert selections(source) == [S.ALL, S.NOT_MAIN]


@pytest.mark.parametrize(
    ("test", "after"),
    [
        # the main rank leaves in a mode of the run (doctr's --test_only, --find_lr): without it every rank goes on
        ("rank == 0 and args.test_only", S.ALL),
        ("args.find_lr and dist.get_rank() == 0", S.ALL),
        ("local_rank == 0 and args.eval_only", S.ALL),
        # the other ranks leave in a mode: what follows is the main rank's work there
        ("rank != 0 and not args.log_all", S.OTHER),
        # the main rank always leaves
        ("rank == 0", S.NOT_MAIN),
    ],
)
def test_an_exit_of_the_main_rank_in_a_mode_of_the_run(test: str, after: RankSelection) -> None:
    source = f"""\
    def main(args, rank):
        if {test}:
            evaluate()
            return
        mark(1)
    """
    assert selections(source) == [after]


def test_helper_called_only_under_a_guard_imagenet() -> None:
    source = """\
    def save_checkpoint(state, filename="checkpoint.pth.tar"):
        mark(1)

    def log(msg):
        mark(2)

    def main_worker(gpu, ngpus_per_node, args):
        args.rank = args.rank * ngpus_per_node + gpu
        if not args.multiprocessing_distributed or (args.multiprocessing_distributed and args.rank % ngpus_per_node == 0):
            save_checkpoint({})
            log("saved")
        log("every rank")

    mp.spawn(main_worker, nprocs=2, args=(2, args))
    """
    assert selections(source) == [S.LOCAL_MAIN, S.ALL]


def test_callers_are_followed_transitively_and_recursion_ends() -> None:
    source = """\
    def inner():
        mark(1)

    def outer():
        inner()

    def ping(n):
        mark(2)
        pong(n)

    def pong(n):
        ping(n - 1)

    class Saver:
        def __init__(self):
            mark(3)

        def save(self):
            mark(4)

    if dist.get_rank() == 0:
        outer()
        ping(3)
        saver = Saver()
        saver.save()
    """
    assert selections(source) == [S.MAIN, S.MAIN, S.MAIN, S.MAIN]


def test_one_unguarded_call_makes_a_helper_run_everywhere() -> None:
    source = """\
    def helper():
        mark(1)

    if rank == 0:
        helper()
    helper()
    """
    assert selections(source) == [S.ALL]


def test_functions_the_file_never_calls_run_where_defined() -> None:
    source = """\
    def callback():
        mark(1)

    if rank == 0:
        def only_main():
            mark(2)
    """
    assert selections(source) == [S.ALL, S.MAIN]


def test_branches() -> None:
    source = """\
    if args.distributed:
        mark(1)
    else:
        mark(2)
    if world_size > 1:
        mark(3)
    mark(4)
    if not dist.is_initialized() or dist.get_rank() == 0:
        mark(5)
    """
    analysis, found = calls(source)
    context = analysis.context  # type: ignore[attr-defined]
    assert [context.branch(c) for c in found] == [Branch.DISTRIBUTED, Branch.SINGLE_PROCESS, Branch.DISTRIBUTED, Branch.BOTH, Branch.BOTH]
    assert [context.selection(c) for c in found] == [S.ALL, S.NONE, S.ALL, S.ALL, S.MAIN]


def test_parent_and_workers() -> None:
    source = """\
    mark(0)

    def setup(rank):
        mark(1)

    def worker(rank, world_size):
        setup(rank)
        mark(2)

    def parse():
        mark(3)
        return None

    def main():
        args = parse()
        mark(4)
        mp.spawn(worker, args=(2,), nprocs=2)

    def unused():
        mark(5)

    if __name__ == "__main__":
        mark(6)
        main()
    """
    analysis, found = calls(source)
    context = analysis.context  # type: ignore[attr-defined]
    assert [context.process(c) for c in found] == [
        Process.EVERY,  # re-imported by every spawned worker
        Process.WORKER,
        Process.WORKER,
        Process.PARENT,
        Process.PARENT,
        Process.EVERY,  # nobody here calls it
        Process.PARENT,
    ]
    assert [context.every_rank(c) for c in found] == [True, True, True, False, False, True, False]


def test_tests_only_the_launched_process_passes() -> None:
    """The Annotated Transformer's shape: a notebook saved as a script that spawns its workers.
    ``__name__ == "__main__"`` in a conjunction, in a helper returning it, and a runner calling
    what it is handed only behind it: that code runs in the launching process (the spawned
    workers import the file as ``__mp_main__``); the worker and unguarded module code do not."""
    source = """\
    RUN_EXAMPLES = True

    def is_interactive_notebook():
        return __name__ == "__main__"

    def show_example(fn, args=[]):
        if __name__ == "__main__" and RUN_EXAMPLES:
            return fn(*args)

    def example_mask():
        mark(1)

    def build_vocab():
        mark(2)

    def worker(rank):
        mark(3)

    def launch():
        mp.spawn(worker, nprocs=2)

    show_example(example_mask)
    mark(4)
    if is_interactive_notebook():
        mark(5)
        vocab = build_vocab()
    if RUN_EXAMPLES and __name__ == "__main__":
        mark(6)
    else:
        mark(7)
    """
    analysis, found = calls(source)
    context = analysis.context  # type: ignore[attr-defined]
    assert [context.process(c) for c in found] == [
        Process.PARENT,  # handed to the runner
        Process.PARENT,  # called in the helper-guarded block
        Process.WORKER,
        Process.EVERY,  # module code every worker imports again
        Process.PARENT,
        Process.PARENT,
        Process.EVERY,  # the other branch of the guard
    ]


@pytest.mark.parametrize(
    "spawn",
    [
        "mp.spawn(worker, nprocs=2)",
        "torch.multiprocessing.spawn(worker, args=(2,), nprocs=2)",
        "mp.start_processes(worker, nprocs=2, start_method='fork')",
        "mp.spawn(functools.partial(worker, cfg=cfg), nprocs=2)",
        "mp.Process(target=worker, args=(0, 2)).start()",
        "multiprocessing.Process(target=worker, args=(0, 2)).start()",
    ],
)
def test_spawn_spellings(spawn: str) -> None:
    source = f"""\
    import functools
    import multiprocessing

    def worker(rank, world_size):
        mark(1)

    def main():
        mark(2)
        {spawn}

    if __name__ == "__main__":
        main()
    """
    analysis, found = calls(source)
    assert [analysis.context.process(c) for c in found] == [Process.WORKER, Process.PARENT]  # type: ignore[attr-defined]


def test_print_overrides_detr() -> None:
    source = """\
    import builtins as __builtin__

    def setup_for_distributed(is_master):
        builtin_print = __builtin__.print

        def print(*args, **kwargs):
            force = kwargs.pop("force", False)
            if is_master or force:
                builtin_print(*args, **kwargs)

        __builtin__.print = print

    def get_args():
        print("parsing")

    def init_distributed_mode(args):
        dist.init_process_group("nccl")
        print("before")
        setup_for_distributed(args.rank == 0)
        print("after")

    def train_one_epoch():
        print("train")

    def main(args):
        get_args()
        init_distributed_mode(args)
        print("main")
        train_one_epoch()

    def unrelated():
        print("elsewhere")
    """
    analysis, found = calls(source, "print")
    silenced = {c.args[0].value.evaluated_value: analysis.output.print_silenced(c) for c in found if c.args}  # type: ignore[attr-defined,union-attr]
    assert silenced == {"parsing": False, "before": False, "after": True, "main": True, "train": True, "elsewhere": True}


@pytest.mark.parametrize(
    "override",
    [
        "builtins.print = lambda *a, **k: None",
        "__builtin__.print = quiet",
        "setattr(builtins, 'print', quiet)",
    ],
)
def test_print_overrides_in_place(override: str) -> None:
    source = f"""\
    import builtins
    import builtins as __builtin__

    def main(rank):
        print("a")
        if rank != 0:
            {override}
        print("b")
    """
    analysis, found = calls(source, "print")
    assert [analysis.output.print_silenced(c) for c in found] == [False, True]  # type: ignore[attr-defined]


def test_print_override_helper_of_another_module() -> None:
    source = """\
    import utils

    print("before")
    utils.init_distributed_mode(args)
    print("after")
    """
    analysis, found = calls(source, "print")
    assert [analysis.output.print_silenced(c) for c in found] == [False, True]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "line, tagged",
    [
        ('print(f"[GPU{rank}] epoch {epoch}")', True),
        ('print(f"rank {dist.get_rank()} done")', True),
        ('print("rank %d" % local_rank)', True),
        ('print("rank {}".format(args.rank))', True),
        ('print("rank", rank, "loss", loss)', True),
        ('print(f"[GPU{self.gpu_id}] Epoch {epoch}")', True),
        ('device = torch.device("cuda:" + str(args.rank))\nprint("Device:", device)', True),  # EfficientConformer
        ('device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")\nprint(device)', True),
        ('model = DDP(model, device_ids=[rank])\nprint(model)', False),
        ('print(f"world size {world_size}")', False),
        ('print(f"loss {loss:.3f}")', False),
        ('print("done", file=sys.stderr)', False),
    ],
)
def test_output_tagged_per_rank(line: str, tagged: bool) -> None:
    analysis, found = calls(line + "\n", "print")
    assert analysis.output.tagged_per_rank(found[0]) is tagged  # type: ignore[attr-defined]


def test_restriction_names_the_test() -> None:
    source = """\
    def helper():
        mark(1)

    def f(rank):
        if rank != 0:
            return
        mark(2)

    if local_rank == 0:
        helper()
    mark(3)
    """
    analysis, found = calls(source)
    context = analysis.context  # type: ignore[attr-defined]
    texts = [None if (r := context.restriction(c)) is None else cst.Module([]).code_for_node(r) for c in found]
    assert texts == ["local_rank == 0", "rank != 0", None]


def test_main_guard_spellings() -> None:
    analysis = analyse("if __name__ == '__main__':\n    pass\nif '__main__' == __name__:\n    pass\nif __name__ != '__main__':\n    pass\n")
    assert [is_main_guard(i) for i in analysis.source.of_types(cst.If)] == [True, True, False]


def test_a_parameter_named_like_a_method_is_no_mention_of_it() -> None:
    """minGPT's Trainer: ``def train(self)`` and ``def _run_batch(self, source, train=True)``."""
    source = """\
    class Trainer:
        def _run_batch(self, source, train=True):
            if train:
                mark(1)

        def _run_epoch(self, epoch, train=True):
            self._run_batch(None, train)

        def train(self):
            for epoch in range(3):
                self._run_epoch(epoch, train=True)
                if self.global_rank == 0:
                    mark(2)
    """
    assert selections(source) == [S.ALL, S.MAIN]


def test_functions_called_only_from_a_cycle_run_anywhere() -> None:
    source = """\
    def a():
        mark(1)
        b()

    def b():
        a()
    """
    assert selections(source) == [S.ALL]


def test_mentions_of_functions_and_methods() -> None:
    analysis = analyse(
        "def log(x):\n    pass\n\ndef f(log):\n    return log\n\nhooks = [log]\n\n"
        "class T:\n    def step(self):\n        pass\n\n    def run(self, step=1):\n        cb = self.step\n        self.step()\n        return step\n"
    )
    source = analysis.source
    log, step = source.functions["log"][0], source.functions["step"][0]
    assert [source.line(n) for n in source.mentions_of(log)] == [7]
    assert [source.line(n) for n in source.mentions_of(step)] == [14]

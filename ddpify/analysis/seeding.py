"""Which calls seed a global random number generator, which draw from one, and which project
helpers do either for their caller: ``fix_random_seeds(args.seed)`` in a sibling module seeds
torch and NumPy with its argument, the same on every rank unless the helper adds the rank
itself; a model class of another module whose layers include dropout consumes torch's RNG.
One definition for the linter's seed rules and the project summaries."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.main_guards import is_name_test
from ddpify.analysis.module_facts import through_calls
from ddpify.analysis.project import ON_IMPORT, Seeding
from ddpify.analysis.ranks import GLOBAL_NAME
from ddpify.tree import cstutil
from ddpify.tree.cstutil import code, is_simple_reference, keyword_value

if TYPE_CHECKING:
    from ddpify.analysis.rank_tests import RankTests
    from ddpify.analysis.source import Source

# The seeding functions and the RNG each seeds.
SEEDS = {
    "torch.manual_seed": "torch",
    "torch.random.manual_seed": "torch",
    "torch.cuda.manual_seed": "torch",
    "torch.cuda.manual_seed_all": "torch",
    "random.seed": "random",
    "numpy.random.seed": "numpy",
}
# Library helpers that seed Python's, NumPy's and torch's RNGs with their first argument.
LIBRARY_SEEDERS = frozenset(
    {
        "torch_geometric.seed_everything",
        "pytorch_lightning.seed_everything",
        "pytorch_lightning.utilities.seed.seed_everything",
        "lightning.seed_everything",
        "lightning.pytorch.seed_everything",
        "lightning.fabric.seed_everything",
        "lightning_fabric.seed_everything",
        "transformers.set_seed",
        "transformers.trainer_utils.set_seed",
        "accelerate.utils.set_seed",
        "mmengine.runner.set_random_seed",
        "mmcv.runner.set_random_seed",
        "mmdet.apis.set_random_seed",
        "monai.utils.set_determinism",
        "monai.utils.misc.set_determinism",
        "detectron2.utils.env.seed_all_rng",
    }
)
ALL_RNGS = frozenset({"torch", "numpy", "random"})
DATALOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_NOT_DRAWS = re.compile(r"(^|\.)(seed|getstate|setstate|get_state|set_state|Random|RandomState|default_rng|Generator|SeedSequence)$")
_TORCH_DRAWS = re.compile(r"^torch\.(rand|randn|randint|randperm|normal|bernoulli|multinomial|poisson|rand_like|randn_like|randint_like)$")
# What consumes torch's RNG after seeding without naming it: in-place random fills, dropout,
# random augmentation, masks and collators, and DataLoader workers (seeded from it). Weight
# initialisers of ``torch.nn.init`` are not: the same initial model on every rank is what DDP wants.
# MONAI's ``Rand*`` transforms (``RandFlipd``) are seeded from what ``set_determinism`` sets.
_TORCH_CONSUMERS = re.compile(
    r"^(normal_|uniform_|random_|bernoulli_|exponential_|dropout\w*|Dropout\w*|Random\w+|Rand[A-Z]\w*|AutoAugment|"
    r"TrivialAugment\w*|AugMix|\w*[Mm]ixup\w*|\w*[Cc]ut[Mm]ix\w*|\w*[Aa]ugment\w*|\w*[Cc]ollator|\w*transforms?|"
    r"create_transform|make_transforms?|build_transforms?)$"
)
# The networks of the transformer libraries whose architectures train with dropout by default
# (BERT, GPT-2, ELECTRA, T5: 0.1): building or loading one (``from_pretrained``), or a class on
# such a base, consumes torch's RNG in every training forward. LLaMA-style decoders (no
# dropout) and ``Auto*`` classes (any architecture) do not say; tokenizers and configs draw nothing.
_TRANSFORMER_LIBRARIES = ("transformers.", "pytorch_transformers.", "pytorch_pretrained_bert.")
_DROPOUT_NETWORK = re.compile(
    r"^(TF)?(Bert|Roberta|XLMRoberta|Electra|GPT2|OpenAIGPT|XLNet|DistilBert|T5|MT5|Bart|MBart|Pegasus|Deberta\w*|"
    r"Longformer|Camembert|Funnel|MPNet|BigBird|Wav2Vec2|Hubert)"
)
_NOT_NETWORK = re.compile(r"(Tokenizer|Config|Processor|FeatureExtractor|Extractor)\w*$", re.I)


def drawn_family(qualified: set[str], call: cst.Call) -> str | None:
    """The global RNG a call (of the ``qualified`` names) draws from (``random.randint`` ->
    "random", ``np.random.rand`` -> "numpy"); None for a draw from a generator of its own
    (``generator=sample_rng``)."""
    if any(a.keyword is not None and a.keyword.value == "generator" for a in call.args):
        return None
    for name in qualified:
        if _NOT_DRAWS.search(name):
            return None
        if name.startswith("random.") and name.count(".") == 1:
            return "random"
        if name.startswith("numpy.random."):
            return "numpy"
        if _TORCH_DRAWS.match(name):
            return "torch"
    return None


def consumes_torch(callee: str, qualified: set[str], call: cst.Call) -> bool:
    """A call (named ``callee``) that takes numbers from torch's RNG without drawing them
    itself: dropout (also a pretrained transformer network's), random augmentation, in-place
    random fills, a DataLoader with workers."""
    if qualified & DATALOADER:
        return has_workers(call)
    if callee == "from_pretrained":  # `ElectraReranker.from_pretrained(path)`, also a class of the project
        return isinstance(call.func, cst.Attribute) and _dropout_network(code(call.func.value).rpartition(".")[2])
    if transformer_network(qualified):
        return True
    return bool(_TORCH_CONSUMERS.match(callee)) and not any(q.startswith("torch.nn.init.") for q in qualified)


def consumed(source: Source, node: cst.CSTNode) -> frozenset[str]:
    """The RNGs the calls under ``node`` draw from or consume ("torch", "numpy", "random")."""
    found: set[str] = set()
    for call in source.of_types_in(node, cst.Call):
        assert isinstance(call, cst.Call)
        qualified = source.qualified(call)
        drawn = drawn_family(qualified, call)
        if drawn is not None:
            found.add(drawn)
        elif consumes_torch(_callee(call), qualified, call):
            found.add("torch")
    return frozenset(found)


def transformer_network(qualified: set[str]) -> bool:
    """The names (of a call or a base class) include a network of a transformer library that
    trains with dropout (``transformers.BertModel``, ``pytorch_pretrained_bert...GPT2PreTrainedModel``)."""
    return any(q.startswith(_TRANSFORMER_LIBRARIES) and _dropout_network(q.rpartition(".")[2]) for q in qualified)


def _dropout_network(name: str) -> bool:
    return bool(_DROPOUT_NETWORK.match(name)) and not _NOT_NETWORK.search(name)


def _callee(call: cst.Call) -> str:
    func = call.func
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""


def has_workers(call: cst.Call) -> bool:
    """A DataLoader given ``num_workers`` other than a literal 0: its workers are seeded from
    torch's RNG, unless they are reseeded with the rank (``reseeded_per_rank``)."""
    return _workers(call) and not reseeded_per_rank(call)


def reseeded_per_rank(call: cst.Call) -> bool:
    """A DataLoader with workers whose ``worker_init_fn`` is handed the rank to reseed them with
    (yolov4's ``partial(worker_init_fn, rank=rank, seed=seed)``): each rank's workers draw
    apart, whatever the main process was seeded with."""
    init = keyword_value(call, "worker_init_fn")
    if init is None or not _workers(call):
        return False
    handed = [n.value for n in cstutil.of_types(init, cst.Name)] + [
        a.keyword.value for a in cstutil.of_types(init, cst.Arg) if a.keyword is not None
    ]
    return any(GLOBAL_NAME.match(name) for name in handed)


def _workers(call: cst.Call) -> bool:
    workers = keyword_value(call, "num_workers")
    return workers is not None and not (isinstance(workers, cst.Integer) and workers.evaluated_value == 0)


def seeding(source: Source, rank_tests: RankTests, function: cst.FunctionDef) -> Seeding | None:
    """How ``function`` seeds the global RNGs from one of its parameters (or an attribute of
    it: ``set_seed(args)`` seeding with ``args.seed``), unchanged by a rank; None when it seeds
    nothing, or with a value that names a rank (``seed + get_rank()``)."""
    names = [p.name.value for p in function.params.params]
    families: set[str] = set()
    parameter: tuple[str, str] | None = None
    for call in source.of_types_in(function, cst.Call):
        seeded = next((SEEDS[q] for q in source.qualified(call) if q in SEEDS), None)
        if seeded is None or not call.args or source.enclosing_function(call) is not function:
            continue
        value = _read_from(source, function, call.args[0].value)
        if rank_tests.depends_on_rank(value):
            return None
        reference = _reference(value)
        if reference is None:
            continue
        root, dot, rest = reference.partition(".")
        if root in names and parameter in (None, (root, dot + rest)):
            parameter = (root, dot + rest)
            families.add(seeded)
    if parameter is None:
        return None
    return Seeding(frozenset(families), names.index(parameter[0]), parameter[0], parameter[1])


def _read_from(source: Source, function: cst.FunctionDef, value: cst.BaseExpression) -> cst.BaseExpression:
    """What a seed value reads, through a local name the function assigns once
    (``random_seed = getattr(opts, "common.seed", 0)``)."""
    if isinstance(value, cst.Name):
        bound = [(s, v) for s, v in source.assignments.get(value.value, []) if source.enclosing_function(s) is function]
        parameters = {p.name.value for p in function.params.params}
        if value.value in parameters and all(_fills_default(source, s, value.value) for s, _ in bound):
            return value  # `if seed is None: seed = random.getrandbits(32)`: the caller's seed where it gives one
        if len(bound) == 1 and bound[0][1] is not None:
            return bound[0][1]
    return value


def default_seed(source: Source, function: cst.FunctionDef, how: Seeding) -> cst.BaseExpression | None:
    """The seed ``function`` uses where a call leaves its seed parameter out: the default, or
    what ``if seed is None: seed = ...`` puts there (slimmable's ``set_random_seed()`` seeding with
    ``getattr(FLAGS, 'random_seed', 0)``). None: a call must give it, or it is not one value."""
    if how.attribute:
        return None
    param = next((p for p in function.params.params if p.name.value == how.name), None)
    if param is None or param.default is None:
        return None
    if not (isinstance(param.default, cst.Name) and param.default.value == "None"):
        return param.default
    bound = [(s, v) for s, v in source.assignments.get(how.name, []) if source.enclosing_function(s) is function]
    return bound[0][1] if len(bound) == 1 and _fills_default(source, bound[0][0], how.name) else None


def _fills_default(source: Source, statement: cst.CSTNode, name: str) -> bool:
    """``statement`` binds ``name`` only where it is None (``if seed is None:``, ``if not seed:``)."""
    child = statement
    for ancestor in source.ancestors(statement):
        if isinstance(ancestor, cst.If):
            return code(ancestor.test) in (f"{name} is None", f"not {name}") and child is ancestor.body
        if isinstance(ancestor, cst.FunctionDef):
            return False
        child = ancestor
    return False


def _reference(value: cst.BaseExpression) -> str | None:
    """``args.seed``; ``getattr(opts, "common.seed", 0)`` as ``opts.common.seed`` (ml-cvnets'
    ``device_setup(opts)``); None for anything else."""
    if is_simple_reference(value):
        return code(value)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "getattr" and len(value.args) >= 2:
        owner, name = value.args[0].value, value.args[1].value
        if isinstance(owner, cst.Name) and isinstance(name, cst.SimpleString) and isinstance(name.evaluated_value, str):
            return f"{owner.value}.{name.evaluated_value}"
    return None


def module_draws(source: Source, functions: list[cst.FunctionDef]) -> dict[str, frozenset[str]]:
    """``Helper.draws`` of a module's top-level ``functions`` (by name) and of its top-level
    classes (as ``Class.__init__``), following calls to the module's own functions and to the
    project helpers it imports."""

    def draws(node: cst.CSTNode, called: Callable[[cst.Call], frozenset[str] | None]) -> frozenset[str]:
        found = set(consumed(source, node))
        for call in source.of_types_in(node, cst.Call):
            assert isinstance(call, cst.Call)
            found |= called(call) or frozenset()
        return frozenset(found)

    answers = through_calls(source, functions, lambda f, called: draws(f, called) or None, lambda helper: helper.draws or None)
    found = {f.name.value: families for f, families in answers.items()}
    classes = [c for c in source.of_types(cst.ClassDef) if isinstance(c, cst.ClassDef) and source.enclosing_class(c) is None]
    for owner in classes:
        if source.enclosing_function(owner) is None:
            families = draws(owner, lambda call: _called_draws(source, answers, call))
            if any(transformer_network(source.qualified(base.value)) for base in owner.bases):
                families |= {"torch"}  # `class GPT2ModelFP16(GPT2Model)`: the library's dropout layers
            if families:
                found[f"{owner.name.value}.__init__"] = families
    return found


def seeds_torch(qualified: set[str]) -> bool:
    """A call (of the ``qualified`` names) that seeds torch's global RNG: ``torch.manual_seed``, a
    library's seed-everything helper."""
    return any(SEEDS.get(q) == "torch" for q in qualified) or bool(qualified & LIBRARY_SEEDERS)


def module_torch_seeders(source: Source, functions: list[cst.FunctionDef]) -> set[str]:
    """``Helper.seeds_torch``: the module's top-level ``functions`` (by name) and top-level
    classes (as ``Class.__init__``) whose code seeds torch's global RNG with whatever value
    (``torch.manual_seed(cfg.seed)``), also through the module's functions and the project
    helpers it calls; and ``ON_IMPORT`` when its module-level code does (outside the
    ``__main__`` block), or a project module it imports does on import. A spawned worker that
    calls none of these starts from torch's fixed default seed."""

    def seeds(node: cst.CSTNode, called: Callable[[cst.Call], bool | None]) -> bool | None:
        return (
            any(seeds_torch(source.qualified(c)) or called(c) for c in source.of_types_in(node, cst.Call) if isinstance(c, cst.Call))
            or None
        )

    answers = through_calls(source, functions, seeds, lambda helper: helper.seeds_torch or None)
    found = {f.name.value for f in answers}

    def called(call: cst.Call) -> bool | None:
        helper = source.project.helper(call)
        if helper is not None:
            return helper.seeds_torch
        return isinstance(call.func, cst.Name) and any(f in answers for f in source.functions_called(call))

    for statement in source.module.body:
        if isinstance(statement, cst.ClassDef) and seeds(statement, called):
            found.add(f"{statement.name.value}.__init__")
        elif isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
            if any(h.seeds_torch for h in source.project.on_import(statement)):
                found.add(ON_IMPORT)
        elif (
            not isinstance(statement, cst.FunctionDef)
            and not (isinstance(statement, cst.If) and is_name_test(statement.test))
            and seeds(statement, called)
        ):
            found.add(ON_IMPORT)
    return found


def _called_draws(source: Source, answers: dict[cst.FunctionDef, frozenset[str]], call: cst.Call) -> frozenset[str] | None:
    """What a call in a class draws through the project's helpers or the module's functions."""
    helper = source.project.helper(call)
    if helper is not None:
        return helper.draws
    if not isinstance(call.func, cst.Name):
        return None  # `x.step()`: ``answers`` holds module functions only, called by their name
    return frozenset(f for function in source.functions_called(call) for f in answers.get(function, frozenset()))

"""The PyTorch (and friends) APIs the converter recognises, by fully qualified name.

Names are resolved through imports and aliases with libcst's QualifiedNameProvider, so
``import torch.utils.data as Data; Data.DataLoader`` and ``from torch.utils.data import
DataLoader as DL`` are the same thing here.
"""

from __future__ import annotations

import re

from ddpify.analysis.loads import TORCH_LOAD as TORCH_LOAD  # one definition, re-exported
from ddpify.analysis.loggers import SUMMARY_WRITERS

DATALOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DATAPARALLEL = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel.DataParallel",
    }
)
TORCH_DEVICE = frozenset({"torch.device"})
CURRENT_ACCELERATOR = frozenset({"torch.accelerator.current_accelerator"})
SEED_FUNCTIONS = frozenset(
    {
        "torch.manual_seed",
        "torch.random.manual_seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "random.seed",
        "numpy.random.seed",
    }
)
TORCH_SAVE = frozenset({"torch.save"})
MAKE_DIRECTORY = frozenset({"os.mkdir", "os.makedirs"})
# Calls that read the clock: a name built from them differs between ranks started a second apart.
CLOCK = frozenset(
    {
        "datetime.datetime.now",
        "datetime.datetime.today",
        "datetime.datetime.utcnow",
        "time.strftime",
        "time.time",
        "time.localtime",
        "time.gmtime",
        "time.ctime",
    }
)
PRINT = frozenset({"builtins.print"})
TQDM = frozenset(
    {
        "tqdm.tqdm",
        "tqdm.trange",
        "tqdm.auto.tqdm",
        "tqdm.auto.trange",
        "tqdm.notebook.tqdm",
        "tqdm.notebook.trange",
        "tqdm.std.tqdm",
        "tqdm.tqdm.tqdm",
    }
)
WANDB_PREFIX = "wandb."
# Logging and visualisation clients: one run, one server connection, one event file is rank 0's
# (other ranks get a no-op object from ddpify.rank_zero): the writers above, every wandb call,
# and these constructors and module-level logging functions.
RANK_ZERO_CLIENTS = SUMMARY_WRITERS | frozenset(
    {
        "visdom.Visdom",
        "tensorboard_logger.configure",
        "tensorboard_logger.log_value",
        "tensorboard_logger.log_histogram",
        "tensorboard_logger.log_images",
        "tensorboard_logger.Logger",
        "comet_ml.Experiment",
        "aim.Run",
        "neptune.init",
        "neptune.init_run",
        "mlflow.start_run",
        "mlflow.log_metric",
        "mlflow.log_metrics",
        "mlflow.log_param",
        "mlflow.log_params",
        "mlflow.log_artifact",
    }
)


def is_rank_zero_client(qualified: set[str]) -> bool:
    """A call whose object or effect belongs to rank 0 alone (``RANK_ZERO_CLIENTS``, ``wandb.*``)."""
    return bool(qualified & RANK_ZERO_CLIENTS) or any(q.startswith(WANDB_PREFIX) for q in qualified)


OPTIMIZER_PREFIX = "torch.optim."
# A variable holding an optimizer a helper built (`optimizer = build_optimizer(model, cfg)`).
OPTIMIZER_VARIABLE = re.compile(r"optim|(^|_)opt($|_)", re.I)
SCHEDULER_PREFIX = "torch.optim.lr_scheduler."
# Schedulers stepped with a metric: each rank's own metric would change the learning rate apart.
METRIC_SCHEDULERS = frozenset({"torch.optim.lr_scheduler.ReduceLROnPlateau"})
# Optimizers imported from other libraries (transformers.AdamW, bitsandbytes, timm, ...).
OPTIMIZER_CLASS = re.compile(r"(^|\.)(Adam\w*|SGD|RMSprop|Adagrad|Adadelta|Adamax|LBFGS|Lion|Lamb|LAMB|NAdam|RAdam|Rprop|ASGD|SparseAdam)$")
ITERABLE_DATASET = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})
DISTRIBUTED_PREFIXES = ("torch.distributed", "torch.nn.parallel.DistributedDataParallel")
INIT_PROCESS_GROUP = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
DDP_CLASSES = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})
RUNTIME_MODULE = "ddpify.runtime"

# Variables that conventionally hold a device: `device = 0`, `self.gpu = "cuda"`.
DEVICE_VARIABLE = re.compile(r"^(device|dev|gpu|gpu_id|gpu_ids|device_id|cuda_device|cuda)$", re.I)
CUDA_STRING = re.compile(r"^cuda(:\d+)?$")
MPS_STRING = re.compile(r"^mps(:\d+)?$")  # Apple's GPU: no process group backend for it
# Tests for a non-finite value (`torch.isnan(loss).any()`, `loss.isinf()`): what one rank sees
# in its own batch, an event of that rank only.
NON_FINITE_CHECKS = frozenset(
    f"{module}.{name}" for module in ("torch", "math", "numpy") for name in ("isnan", "isinf", "isfinite", "isneginf", "isposinf")
)
NON_FINITE_METHODS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf"})
EVAL_LOADER = re.compile(r"val|test|eval|dev(?!ice)", re.I)
TRAIN_LOADER = re.compile(r"train", re.I)
# Variables that hold a loader returned by a helper ddpify cannot see into.
LOADER_VARIABLE = re.compile(r"loader|(^|_)dl$", re.I)
# A helper of the project's own modules that writes a checkpoint: save_checkpoint, save_model,
# checkpoint(...), save_ckpt; not load_checkpoint / restore_checkpoint / resume_from_checkpoint,
# nor a getter of a path or URL (ddim's get_ckpt_path, which downloads one).
CHECKPOINT_HELPER = re.compile(r"save|checkpoint|ckpt", re.I)
NOT_A_SAVE = re.compile(r"load|restore|resume|read|find|latest|exists|^get_|url|fetch", re.I)
# Top-level packages that are libraries, not the project's own modules (with the standard
# library's): their save functions are not the script's checkpoint code.
LIBRARY_MODULES = frozenset(
    """torch torchvision torchaudio torchtext numpy scipy pandas sklearn matplotlib PIL cv2 imageio
    transformers accelerate lightning pytorch_lightning timm wandb tensorboardX mlflow
    tqdm albumentations h5py safetensors huggingface_hub deepspeed apex ddpify visdom tensorboard_logger
    comet_ml aim neptune dill cloudpickle joblib yaml requests gym gymnasium tyro einops seaborn
    torchmetrics datasets tokenizers sentencepiece hydra omegaconf spacy nltk absl fire click typer
    ml_collections tensorflow keras jax flax kornia lpips pytorch_fid torch_fidelity open_clip clip
    skimage sacred configargparse jsonargparse rich loguru termcolor colorama""".split()
)
# Tests that select one process: `rank == 0`, `is_main_process()`, `args.local_rank in [-1, 0]`...
# Superseded by ddpify.analysis.rank_tests; only facts.py and side_effects.py still read it.


def is_optimizer(qualified: set[str]) -> bool:
    """A call that builds an optimizer (and not an LR scheduler)."""
    for name in qualified:
        if name.startswith(SCHEDULER_PREFIX):
            return False
        if name.startswith(OPTIMIZER_PREFIX) or OPTIMIZER_CLASS.search(name):
            return True
    return False


# nn.Module / DDP members that mean the same on the wrapper as on the model. Any other
# attribute of a trained model (model.decode, model.encoder, model.num_classes) lives on the
# inner module only, so the converter reads it through ddpify.unwrap(model).
MODULE_API = frozenset(
    """add_module apply bfloat16 buffers children compile cpu cuda double eval float forward half
    load_state_dict modules named_buffers named_children named_modules named_parameters parameters
    register_backward_hook register_buffer register_forward_hook register_forward_pre_hook
    register_full_backward_hook register_full_backward_pre_hook register_module register_parameter
    requires_grad_ share_memory state_dict to to_empty train training type zero_grad no_sync
    module join register_comm_hook""".split()
)


# A function or class of another project file named like the code that trains a model handed
# to it (`Trainer(cfg, model, ds)`, `train_model(model)`, `fit(...)`): planners/drivers.py.
TRAINER_NAME = re.compile(r"train|fit|learn|solver|engine|runner", re.I)
_TRAINING_TEXT = re.compile(
    r"DataLoader|optim|\.backward\(|" + TRAINER_NAME.pattern + "|" + OPTIMIZER_CLASS.pattern.replace("(^|\\.)", r"\b").rstrip("$"),
    re.I,
)


def may_have_training_code(source: str) -> bool:
    """Cheap text test run before any parsing metadata: training code (a torch DataLoader, an
    optimizer, or a backward pass) cannot exist in a file whose text never names one, however
    it is imported; nor can a hand-over of a model to another file's trainer."""
    return "torch" in source and bool(_TRAINING_TEXT.search(source))


# ---------------------------------------------------------------- values each process makes for itself
# Temporary locations every process creates on its own (planners/paths.py): a folder or file
# rank 0 writes into is not the one another rank reads from.
TEMP_DIRECTORIES = frozenset({"tempfile.mkdtemp", "tempfile.TemporaryDirectory"})
TEMP_FILES = frozenset({"tempfile.NamedTemporaryFile", "tempfile.mkstemp"})
# What converted scripts call instead: rank 0 creates the folder, every rank gets its name.
SHARED_TEMP = frozenset({"ddpify.runtime.shared_mkdtemp", "ddpify.runtime.shared_temporary_directory"})
RANDOM_SPLIT = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})
TENSOR_DATASET = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
# Draws from torch's global generator (planners/random_data.py); `generator=` makes them private.
TORCH_DRAWS = frozenset(
    f"torch.{f}" for f in "rand randn randint randperm normal rand_like randn_like randint_like bernoulli multinomial poisson".split()
)
# numpy's legacy global RNG: `numpy.random.<draw>`, except what seeds or builds a generator.
NUMPY_RANDOM = "numpy.random."
NUMPY_NOT_DRAWS = frozenset({"seed", "default_rng", "RandomState", "Generator", "get_state", "set_state", "SeedSequence", "PCG64"})
# Seeds of the generators those draws use; a call named like a seed helper (`set_seed(s)`,
# `seed_everything(s)`, `ddpify.seed(...)`) seeds them all (a documented heuristic).
TORCH_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
NUMPY_SEEDS = frozenset({"numpy.random.seed"})
OTHER_SEEDS = frozenset({"random.seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all"})
SEED_HELPER = re.compile(r"seed", re.I)
# A command-line option naming a device (`--device cuda:0`, `--gpu 0`) and the objects holding
# parsed options (`args.device`, `opt.gpu`, `self.cfg.device`).
DEVICE_OPTION = re.compile(r"^(device|dev|gpu|gpu_id|device_id|cuda_device|gpu_index|cuda_id)$", re.I)
OPTION_HOLDER = re.compile(r"^(args|opt|opts|options|cfg|config|conf|hparams|hp|flags|params|arguments|parsed)$", re.I)
PARSE_ARGS = frozenset({"parse_args", "parse_known_args", "get_args", "parse_arguments", "get_arguments", "parse_opt", "parse_opts"})

# ---------------------------------------------------------------- logging (planners/logs.py)
LOG_CONFIG = frozenset({"logging.basicConfig", "logging.config.dictConfig", "logging.config.fileConfig"})
LOG_HANDLERS = frozenset(
    {
        "logging.FileHandler",
        "logging.StreamHandler",
        "logging.handlers.RotatingFileHandler",
        "logging.handlers.TimedRotatingFileHandler",
        "logging.handlers.WatchedFileHandler",
    }
)
RANK_ZERO_LOGGING = "ddpify.runtime.rank_zero_logging"

# ---------------------------------------------------------------- web downloads (planners/fetches.py)
# Downloads into a file: the parameter (position, keyword) that names it.
FILE_FETCHES = {
    "urllib.request.urlretrieve": (1, "filename"),
    "wget.download": (1, "out"),
    "gdown.download": (1, "output"),
    "torch.hub.download_url_to_file": (1, "dst"),
}
# Downloads into memory, and downloads into a cache the library checks before fetching again.
MEMORY_FETCHES = frozenset({"requests.get", "requests.api.get", "urllib.request.urlopen", "httpx.get"})
CACHED_FETCHES = frozenset(
    {
        "torch.hub.load",
        "torch.hub.load_state_dict_from_url",
        "huggingface_hub.hf_hub_download",
        "huggingface_hub.snapshot_download",
    }
)
EXISTS_TESTS = frozenset({"os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.lexists"})
EXISTS_METHODS = frozenset({"exists", "is_file", "is_dir"})

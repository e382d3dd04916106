"""Calls that write output (images, figures, exports, data and vocabulary files, CSV and log
files, the terminal) which every rank of a DDP run would now make at once, and the calls the
per-process planners ask about (temporary folders, random splits and draws, device options,
logging set-up, web downloads). The recorder keeps them all (:func:`is_candidate`, one cheap
test per call, in ``Recording.write_calls``); the planners decide what becomes of each
(``ddpify.convert.planners.side_effects`` and the modules it names).
"""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.distributed_code import SET_DEVICE
from ddpify.convert import names

# tqdm's class-level writer, whatever module the class is imported from
TQDM_WRITE = frozenset(f"{bar}.write" for bar in names.TQDM if bar.endswith(".tqdm"))
_IMAGEIO = ("imwrite", "imsave", "mimwrite", "mimsave", "volwrite", "mvolwrite")
# Calls that write a file or the terminal: one process should make them.
WRITERS = {
    "torchvision.utils.save_image": "save_image",
    "matplotlib.pyplot.savefig": "plt.savefig",
    "matplotlib.pyplot.show": "plt.show",
    "matplotlib.pyplot.pause": "plt.pause",
    "matplotlib.pyplot.imsave": "plt.imsave",
    "torch.onnx.export": "torch.onnx.export",
    "sys.stdout.write": "sys.stdout.write",
    "sys.stdout.flush": "sys.stdout.flush",
    **{write: "tqdm.write" for write in TQDM_WRITE},
    # data, vocabulary and array files
    "json.dump": "json.dump",
    "pickle.dump": "pickle.dump",
    "joblib.dump": "joblib.dump",
    "yaml.dump": "yaml.dump",
    "yaml.safe_dump": "yaml.safe_dump",
    "numpy.save": "np.save",
    "numpy.savez": "np.savez",
    "numpy.savez_compressed": "np.savez_compressed",
    "numpy.savetxt": "np.savetxt",
    "cv2.imwrite": "cv2.imwrite",
    # image, animation, audio and video files (unseen20t cGAN: imageio.mimsave of the gif)
    **{f"imageio.{w}": f"imageio.{w}" for w in _IMAGEIO},
    **{f"imageio.v2.{w}": f"imageio.{w}" for w in _IMAGEIO},
    "imageio.v3.imwrite": "imageio.imwrite",
    "skimage.io.imsave": "skimage.io.imsave",
    "scipy.misc.imsave": "scipy.misc.imsave",
    "matplotlib.image.imsave": "plt.imsave",
    **{f"torchvision.io.{w}": f"torchvision.io.{w}" for w in ("write_png", "write_jpeg", "write_video", "write_file")},
    "torchaudio.save": "torchaudio.save",
    "soundfile.write": "soundfile.write",
    # file-system changes: N ranks copying onto one path race, and all but the first removal or
    # move fail (FileNotFoundError)
    **{change: change for change in ("shutil.copyfile", "shutil.copy", "shutil.copy2", "shutil.copytree", "shutil.move")},
    **{change: change for change in ("shutil.rmtree", "os.remove", "os.unlink", "os.rmdir", "os.rename", "os.replace")},
}
# File-system changes that make a path vanish: (position, keyword) of that path. Rank 0 alone
# removing it may pull it from under a rank that still reads it (planners/side_effects.py).
REMOVED_PATH = {
    "shutil.move": (0, "src"),
    "os.rename": (0, "src"),
    "os.replace": (0, "src"),
    "shutil.rmtree": (0, "path"),
    "os.remove": (0, "path"),
    "os.unlink": (0, "path"),
    "os.rmdir": (0, "path"),
}
# Writers of data files (a vocabulary, an array): named in the report of a block that writes one.
DATA_WRITERS = frozenset(
    {"json.dump", "pickle.dump", "joblib.dump", "yaml.dump", "yaml.safe_dump", "np.save", "np.savez", "np.savez_compressed", "np.savetxt"}
)
# Writers of a file whose path is an argument: (position, keyword) of the path, for the report
# when the script reads the file back (the other ranks must then wait for rank 0).
PATH_ARGUMENT = {
    "np.save": (0, "file"),
    "np.savez": (0, "file"),
    "np.savez_compressed": (0, "file"),
    "np.savetxt": (0, "fname"),
    "plt.imsave": (0, "fname"),
    "plt.savefig": (0, "fname"),
    ".savefig()": (0, "fname"),
    "save_image": (1, "fp"),
    "cv2.imwrite": (0, "filename"),
    **{f"imageio.{w}": (0, "uri") for w in _IMAGEIO},
    "skimage.io.imsave": (0, "fname"),
    "scipy.misc.imsave": (0, "name"),
    **{f"torchvision.io.{w}": (1, "filename") for w in ("write_png", "write_jpeg")},
    "torchvision.io.write_file": (0, "filename"),
    "torchvision.io.write_video": (0, "filename"),
    "torchaudio.save": (0, "uri"),
    "soundfile.write": (0, "file"),
    "torch.onnx.export": (2, "f"),
    ".save_pretrained()": (0, "save_directory"),
    ".save_vocabulary()": (0, "save_directory"),
    **{change: (1, "dst") for change in ("shutil.copyfile", "shutil.copy", "shutil.copy2", "shutil.copytree", "shutil.move")},
    **{change: (1, "dst") for change in ("os.rename", "os.replace")},
}
# Drawing into a figure writes nothing by itself, but a helper of this file that draws is an
# output helper (``imshow(img)`` of the tutorials): the figure is rank 0's to show.
DRAWERS = frozenset({"matplotlib.pyplot.imshow", "matplotlib.pyplot.plot"})
# Standard-library writers still recognised by their spelling when the head (``sys``) is bound
# nowhere in the file and a star import may have brought it (``from models import *``, whose
# module imports sys): no qualified name to go by there, a documented heuristic.
STAR_IMPORTED_WRITERS = frozenset({"sys.stdout.write", "sys.stdout.flush"})
_STAR_IMPORTED_METHODS = frozenset(w.rsplit(".", 1)[1] for w in STAR_IMPORTED_WRITERS)
# Methods of objects whose type libcst cannot see (a pandas DataFrame, a matplotlib Figure, a
# Hugging Face tokenizer or model): recognised by the method name alone, a documented heuristic.
WRITE_METHODS = frozenset({"to_csv", "savefig", "save_pretrained", "save_vocabulary"})
CSV_WRITERS = frozenset({"csv.writer", "csv.DictWriter"})
CSV_WRITE_METHODS = frozenset({"writerow", "writerows", "writeheader"})
OPEN = frozenset({"builtins.open"})
# Calls that serialize the model given first: a DDP wrapper there would be pickled or traced.
SERIALIZERS = names.TORCH_SAVE | {"torch.onnx.export"}
# What the per-process planners read: temporary folders, splits, draws and seeds, devices,
# logging set-up, downloads and the existence tests around them.
_PER_PROCESS_NAMES = (
    names.TEMP_DIRECTORIES
    | names.TEMP_FILES
    | names.SHARED_TEMP
    | names.RANDOM_SPLIT
    | names.TENSOR_DATASET
    | names.TORCH_DRAWS
    | names.TORCH_SEEDS
    | names.NUMPY_SEEDS
    | names.OTHER_SEEDS
    | names.SEED_FUNCTIONS
    | names.TORCH_DEVICE
    | SET_DEVICE
    | names.TORCH_LOAD
    | names.LOG_CONFIG
    | names.LOG_HANDLERS
    | names.FILE_FETCHES.keys()
    | names.MEMORY_FETCHES
    | names.CACHED_FETCHES
    | {"ddpify.runtime.save", "ddpify.runtime.load", "ddpify.runtime.device_from"}
)
_CANDIDATE_NAMES = WRITERS.keys() | OPEN | SERIALIZERS | names.MAKE_DIRECTORY | _PER_PROCESS_NAMES
_CANDIDATE_METHODS = WRITE_METHODS | CSV_WRITE_METHODS | {"mkdir", "write", "to", "add_argument"} | names.PARSE_ARGS


def is_candidate(call: cst.Call, qualified: set[str]) -> bool:
    """Cheap first filter in the recorder's ``visit_Call``: may this call write once-only output,
    or make a value each process would make differently?"""
    if qualified & _CANDIDATE_NAMES or any(q.startswith(names.NUMPY_RANDOM) for q in qualified):
        return True
    if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
        return True
    func = call.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        return method in _CANDIDATE_METHODS or not qualified and method in _STAR_IMPORTED_METHODS or "seed" in method.lower()
    # `progress_bar(...)`, `set_seed(...)`, `parse_args()`, or a call of a module-level name of
    # this file (a local output helper)
    return isinstance(func, cst.Name) and (
        "progress" in func.value.lower() or "seed" in func.value.lower() or func.value in names.PARSE_ARGS or func.value in qualified
    )

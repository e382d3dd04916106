"""unseen20t shims: the unseen20s ones without datasets.py (it shadowed VIB-pytorch's datasets/ folder), plus CORPUS_VIEW_FALLBACK (below), a recording graphviz.Digraph, skimage.measure.compare_psnr, RandomAffine, pandas read_csv(header=None, names, usecols, sep) / values / max, scipy.sparse.dok_matrix.
unseen20s shims: the unseen20r ones plus CORPUS_CUDA_STR_TO_CPU (below) and nni.py.
unseen20p shims: the unseen20o ones plus tensorflow.py, graphviz.py, IPython/display.py, scipy.misc.imread (import-only) and h5py File.get + CORPUS_H5_PATH.
unseen20o shims: the unseen20n ones plus CORPUS_CUDA_FLOATTENSOR (below) and matplotlib/gridspec.py.
unseen20n shims: the unseen20m ones plus CORPUS_LOADER_NEXT, CORPUS_ZERO_DIM_INDEX, CORPUS_BCE_SIZE, CORPUS_TORCH_FULL_FLOAT
(below: old-torch behaviours the fetched scripts rely on). unseen20k shims: the unseen20j ones (h5py now reads a pickled dict: run/shim/h5py.py). unseen20j shims: the unseen20i ones plus CORPUS_CUDA_DEVICE_AS_CPU (below). unseen20h shims: the unseen20g ones, plus CORPUS_NUMPY_ALIASES and CORPUS_ADAM_INT_BETAS (below). unseen20g shims: the unseen20f ones (copied from unseen20e, plus CORPUS_OLD_YAML), then the corpus check shim (tests/corpus/run/shim/sitecustomize.py, which this one shadows).

CORPUS_OLD_YAML=1: yaml.load without a Loader works as in PyYAML 5 (FullLoader).

CORPUS_FAKE_CUDA=1: `.cuda()` on tensors and modules returns them unchanged (the scripts call .cuda() unconditionally;
this machine has no GPU). torch.cuda.is_available() stays False, so converted scripts pick gloo/CPU. The judge grades
every `.cuda()` item by reading the converted code, not by this run.
"""
import os

if os.environ.get("CORPUS_FAKE_CUDA") == "1":
    import torch

    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.nn.Module.cuda = lambda self, *a, **k: self
    if not torch.cuda.is_available():
        # unseen20g: torch.cuda.synchronize() (MUNIT's train loop) is a no-op here, as .cuda() is
        torch.cuda.synchronize = lambda *a, **k: None

if os.environ.get("CORPUS_TORCH_SERIALIZATION") == "1":
    # unseen20g: torch.utils.serialization.load_lua (removed in torch 1.0; torch 2 has a torch.utils.serialization package
    # without it) as an import-only stand-in: MUNIT's utils.py imports it at the top for the VGG loss, which the corpus run
    # switches off (vgg_w 0); calling it raises.
    import torch.utils.serialization as _ser

    def _load_lua(*a, **k):
        raise RuntimeError("torch.utils.serialization stand-in: load_lua is not available")

    _ser.load_lua = _load_lua

if os.environ.get("CORPUS_OLD_YAML") == "1":
    # PyYAML < 6 behaviour: yaml.load(f) without Loader= (the scripts' own call) loads with FullLoader, as 5.x did.
    import yaml

    _yaml_load = yaml.load

    def _load(stream, Loader=None, **k):
        return _yaml_load(stream, Loader=Loader or yaml.FullLoader, **k)

    yaml.load = _load

if os.environ.get("CORPUS_NUMPY_ALIASES") == "1":
    # unseen20h: numpy 1.x aliases removed in numpy 2 (disentangling-vae's encoders/decoders call np.product), restored
    # as the functions they were aliases of.
    import numpy as _np

    for _old, _new in (("product", "prod"), ("cumproduct", "cumprod"), ("alltrue", "all"), ("sometrue", "any")):
        if not hasattr(_np, _old):
            setattr(_np, _old, getattr(_np, _new))
    # unseen20n: the numpy < 1.24 scalar aliases np.float / np.int / np.bool (thuml/CDAN network.calc_coeff: np.float)
    for _old, _new in (("float", float), ("int", int), ("bool", bool)):
        if _old not in _np.__dict__:
            setattr(_np, _old, _new)

if os.environ.get("CORPUS_ADAM_INT_BETAS") == "1":
    # unseen20h: torch 2.13's Adam rejects betas mixing an int and a float ("betas must be either both floats or both
    # Tensors"); older torch accepted them. StyleGAN.pytorch's config.py has beta_1 = 0 (an int) and yacs forbids a
    # float over it, so the betas are made floats here, as older torch used them.
    import torch as _torch

    _adam_init = _torch.optim.Adam.__init__

    def _adam_init_float_betas(self, params, *a, **k):
        b = k.get("betas")
        if isinstance(b, (tuple, list)) and any(isinstance(x, int) and not isinstance(x, bool) for x in b):
            k["betas"] = tuple(float(x) for x in b)
        _adam_init(self, params, *a, **k)

    _torch.optim.Adam.__init__ = _adam_init_float_betas

if os.environ.get("CORPUS_CUDA_DEVICE_AS_CPU") == "1":
    # unseen20j: torch.device('cuda:0') built by the script itself (pytorch-gan-collections' module-level
    # `device = torch.device('cuda:0')`) names the CPU here, as .cuda() does under CORPUS_FAKE_CUDA: this machine has no
    # GPU. isinstance(x, torch.device) keeps working. The judge grades device items by reading the converted code.
    import torch as _torch

    _real_device = _torch.device

    class _DeviceMeta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, _real_device)

        def __call__(cls, *a, **k):
            if a and isinstance(a[0], str) and a[0].startswith("cuda"):
                return _real_device("cpu")
            if k.get("type", "").startswith("cuda"):
                return _real_device("cpu")
            return _real_device(*a, **k)

    class device(metaclass=_DeviceMeta):
        pass

    _torch.device = device

if os.environ.get("CORPUS_CUDA_STR_TO_CPU") == "1":
    # unseen20s: `x.to('cuda')` / `module.to('cuda')` with the device as a STRING (Teacher-Assistant-KD's TrainManager
    # keeps device = 'cuda' and calls data.to(self.device)) moves nothing here, as .cuda() under CORPUS_FAKE_CUDA: this
    # machine has no GPU. The judge grades device items by reading the converted code.
    import torch as _torch

    def _cpu_args(a, k):
        a = list(a)
        if a and ((isinstance(a[0], str) and a[0].startswith("cuda")) or
                  (isinstance(a[0], _torch.device) and a[0].type == "cuda")):
            a[0] = "cpu"
        d = k.get("device")
        if (isinstance(d, str) and d.startswith("cuda")) or (isinstance(d, _torch.device) and d.type == "cuda"):
            k["device"] = "cpu"
        return a, k

    _tensor_to = _torch.Tensor.to
    _module_to = _torch.nn.Module.to

    def _tensor_to_cpu(self, *a, **k):
        a, k = _cpu_args(a, k)
        return _tensor_to(self, *a, **k)

    def _module_to_cpu(self, *a, **k):
        a, k = _cpu_args(a, k)
        return _module_to(self, *a, **k)

    _torch.Tensor.to = _tensor_to_cpu
    _torch.nn.Module.to = _module_to_cpu

_check = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "run", "shim", "sitecustomize.py")
with open(_check) as _f:
    exec(compile(_f.read(), os.path.abspath(_check), "exec"))

if os.environ.get("CORPUS_PLATEAU_VERBOSE") == "1":
    # unseen20l: ReduceLROnPlateau(..., verbose=True) as in torch < 2.7 (the keyword is gone in the torch here; the
    # corpus run drops it: it only printed the lr changes). jvanvugt/pytorch-domain-adaptation train_source.py.
    import torch.optim.lr_scheduler as _lrs

    _plateau_init = _lrs.ReduceLROnPlateau.__init__

    def _plateau_init_verbose(self, *a, verbose=None, **k):
        _plateau_init(self, *a, **k)

    _lrs.ReduceLROnPlateau.__init__ = _plateau_init_verbose

if os.environ.get("CORPUS_TORCH_ACCUMULATE") == "1":
    # unseen20m: torch._utils._accumulate (removed in torch 2.x) as itertools.accumulate, which it was a copy of
    # (deep-text-recognition-benchmark's dataset.py imports it).
    import itertools
    import torch._utils as _tu

    if not hasattr(_tu, "_accumulate"):
        _tu._accumulate = itertools.accumulate

if os.environ.get("CORPUS_LOAD_URL_DIR"):
    # unseen20m: torch.utils.model_zoo.load_url / torch.hub.load_state_dict_from_url read the file named like the URL's
    # last part from $CORPUS_LOAD_URL_DIR (written by a run script's setup()); nothing is downloaded.
    import torch
    import torch.hub
    import torch.utils.model_zoo

    def _load_url(url, model_dir=None, map_location=None, *a, **k):
        return torch.load(os.path.join(os.environ["CORPUS_LOAD_URL_DIR"], os.path.basename(url)),
                          map_location=map_location or "cpu", weights_only=False)

    torch.hub.load_state_dict_from_url = _load_url
    torch.utils.model_zoo.load_url = _load_url

if os.environ.get("CORPUS_TORCH_LOAD_FULL") == "1":
    # unseen20m: torch.load without weights_only= loads full pickles, as torch < 2.6 did (knowledge-distillation-study
    # saves the whole student module under 'net' in last.pth and reloads the file with a bare torch.load).
    import torch as _torch_l

    _torch_load = _torch_l.load

    def _load_full(*a, **k):
        k.setdefault("weights_only", False)
        return _torch_load(*a, **k)

    _torch_l.load = _load_full


if os.environ.get("CORPUS_LOADER_NEXT") == "1":
    # unseen20n: a DataLoader iterator's .next() method (torch < 1.x; thuml/CDAN and carpedm20/DiscoGAN-pytorch call
    # iter(loader).next()). Torch's iterator gets next = __next__; the corpus check shim's generator-based __iter__ (above)
    # is wrapped in an object with .next only when what it returns lacks it (torch's own iterator objects pass unchanged).
    import torch.utils.data.dataloader as _dl

    _dl._BaseDataLoaderIter.next = _dl._BaseDataLoaderIter.__next__

    class _NextIter:
        def __init__(self, it): self._it = it
        def __iter__(self): return self
        def __next__(self): return next(self._it)
        next = __next__

    _loader_iter = _dl.DataLoader.__iter__

    def _iter_with_next(self):
        it = _loader_iter(self)
        return it if hasattr(it, "next") else _NextIter(it)

    _dl.DataLoader.__iter__ = _iter_with_next

if os.environ.get("CORPUS_ZERO_DIM_INDEX") in ("1", "item"):
    # unseen20n: loss.data[0] on a 0-dim tensor returns that tensor, as torch < 0.4 returned the scalar (mixup-cifar10
    # and DiscoGAN-pytorch print / sum their losses with .data[0]); every other index is torch's own.
    import torch as _torch_z

    _getitem = _torch_z.Tensor.__getitem__

    def _getitem_0dim(self, idx):
        if isinstance(idx, int) and idx == 0 and self.dim() == 0:
            # unseen20t: CORPUS_ZERO_DIM_INDEX=item returns the Python number, as torch < 0.4 did (znxlwm cGAN builds
            # torch.FloatTensor(list of loss.data[0]))
            return self.item() if os.environ.get("CORPUS_ZERO_DIM_INDEX") == "item" else self
        return _getitem(self, idx)

    _torch_z.Tensor.__getitem__ = _getitem_0dim

if os.environ.get("CORPUS_BCE_SIZE") == "1":
    # unseen20n: BCELoss with a target of another shape but the same number of elements (input (B, 1), target (B,)):
    # torch < 1.0 accepted it with a warning (DiscoGAN-pytorch's D outputs (B, 1), its labels are (B,)); here the target
    # is viewed as the input's shape.
    import torch.nn.functional as _F

    _bce = _F.binary_cross_entropy

    def _bce_size(input, target, *a, **k):
        if target.shape != input.shape and target.numel() == input.numel():
            target = target.view_as(input)
        return _bce(input, target, *a, **k)

    _F.binary_cross_entropy = _bce_size

if os.environ.get("CORPUS_TORCH_FULL_FLOAT") == "1":
    # unseen20n: torch.full(size, <int>) without dtype gives the default float dtype, as torch < 1.7 did (llien30/AnoGAN
    # builds its BCEWithLogits labels with torch.full((n,), 1)); with dtype= or a float fill, torch's own.
    import torch as _torch_f

    _full = _torch_f.full

    def _full_float(size, fill_value, *a, **k):
        if "dtype" not in k and isinstance(fill_value, int) and not isinstance(fill_value, bool) and not a:
            k["dtype"] = _torch_f.get_default_dtype()
        return _full(size, fill_value, *a, **k)

    _torch_f.full = _full_float

if os.environ.get("CORPUS_CUDA_FLOATTENSOR") == "1":
    # unseen20o: torch.cuda.FloatTensor(*sizes) builds a CPU float tensor here, as .cuda() is a no-op under
    # CORPUS_FAKE_CUDA (pclucas14/pytorch-glow's GaussianPrior.reverse_ and utils.standard_gaussian call it directly;
    # this machine has no GPU). The judge grades device items by reading the converted code.
    import torch as _torch_c

    _torch_c.cuda.FloatTensor = lambda *a, **k: _torch_c.FloatTensor(*a, **k)

if os.environ.get("CORPUS_CHUNK_COPY") == "1":
    # unseen20o: torch.chunk's pieces are copies, so that in-place arithmetic on them works as in torch < 1.x
    # (pclucas14/pytorch-glow's AffineCoupling does `z1, z2 = torch.chunk(x, 2, dim=1); z2 += shift`; torch 2 refuses
    # in-place changes of a multi-output view). Values and gradients are those of the original code.
    import torch as _torch_k

    _chunk = _torch_k.chunk

    def _chunk_copy(input, *a, **k):
        return tuple(p.clone() for p in _chunk(input, *a, **k))

    _torch_k.chunk = _chunk_copy

if os.environ.get("CORPUS_CUDA_STREAM") == "1":
    # unseen20r: CUDA-stream prefetchers (MIR_sample_cnn src/data/prefetcher.py, SRGAN-PyTorch dataset.CUDAPrefetcher)
    # and torch.cuda.set_device on a machine without a GPU: torch.cuda.Stream / torch.cuda.stream(...) /
    # torch.cuda.current_stream().wait_stream(...) are no-op stand-ins and set_device does nothing, as .cuda() is a
    # no-op under CORPUS_FAKE_CUDA. torch.cuda.is_available() stays False. The judge grades device items by reading the
    # converted code.
    import contextlib as _ctx
    import torch as _torch_s

    if not _torch_s.cuda.is_available():
        class _Stream:
            def __init__(self, *a, **k): pass
            def wait_stream(self, *a, **k): pass
            def synchronize(self): pass
            def record_event(self, *a, **k): return None

        _torch_s.cuda.Stream = _Stream
        _torch_s.cuda.stream = lambda *a, **k: _ctx.nullcontext()
        _torch_s.cuda.current_stream = lambda *a, **k: _Stream()
        _torch_s.cuda.set_device = lambda *a, **k: None

if os.environ.get("CORPUS_VIEW_FALLBACK") == "1":
    # unseen20t: Tensor.view on a non-contiguous slice falls back to reshape, as it worked in the torch these scripts were
    # written for (pt.darts utils.accuracy: correct[:k].view(-1) on the transposed top-k comparison; torch 2 raises "view
    # size is not compatible with input tensor's size and stride"). Values are the same; only that error is caught.
    import torch as _torch_v

    _view = _torch_v.Tensor.view

    def _view_or_reshape(self, *a, **k):
        try:
            return _view(self, *a, **k)
        except RuntimeError as e:
            if "view size is not compatible" not in str(e):
                raise
            return self.reshape(*a, **k)

    _torch_v.Tensor.view = _view_or_reshape

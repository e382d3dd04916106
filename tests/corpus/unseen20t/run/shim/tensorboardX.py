"""Do-nothing tensorboardX.SummaryWriter. unseen20k: it makes its log dir as tensorboardX's event-file writer does at
construction (os.makedirs(logdir, exist_ok=True)): pixel_models' main.py writes config.json into that folder next."""
import os


class SummaryWriter:
    def __init__(self, logdir=None, comment="", *a, log_dir=None, **k):
        d = log_dir if log_dir is not None else logdir
        if d:
            os.makedirs(d, exist_ok=True)

    def __getattr__(self, n): return lambda *a, **k: None

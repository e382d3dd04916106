"""unseen20m: psutil stand-in (knowledge-distillation-study's train_distill.py: --num_workers default psutil.cpu_count())."""
import os


def cpu_count(logical=True):
    return os.cpu_count() or 1

"""Starts one worker process per GPU of this machine."""

import torch
import torch.multiprocessing as mp


def run_on_all_gpus(fn, *args):
    n = torch.cuda.device_count()
    mp.spawn(fn, args=(n, *args), nprocs=n)

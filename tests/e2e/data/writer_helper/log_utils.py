"""The project's own helpers: a TensorBoard writer made for a run folder, and a logger class
holding one."""
import os

from tensorboardX import SummaryWriter


def make_writer(log_dir):
    if not os.path.exists(log_dir):
        os.makedirs(log_dir)
    return SummaryWriter(log_dir)


class Recorder:
    def __init__(self, log_dir):
        self.writer = SummaryWriter(log_dir)

    def record(self, name, value, step):
        self.writer.add_scalar(name, value, step)

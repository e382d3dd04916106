"""A stand-in for tensorboardX's SummaryWriter: each writer made opens an event file of its own
(named by its process id) in its folder and appends a line per scalar."""
import os


class SummaryWriter:
    def __init__(self, log_dir):
        os.makedirs(log_dir, exist_ok=True)
        self.file = open(os.path.join(log_dir, f"events.{os.getpid()}"), "w")

    def add_scalar(self, tag, value, step):
        self.file.write(f"{tag} {step} {value}\n")
        self.file.flush()

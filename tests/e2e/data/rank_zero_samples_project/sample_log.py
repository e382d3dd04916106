"""A log of samples written to a file: built on rank 0 only once converted."""


class SampleLog:
    def __init__(self, path):
        self.file = open(path, "w")

    def write(self, step, samples):
        self.file.write(f"{step} {samples.mean().item():.4f}\n")
        self.file.flush()

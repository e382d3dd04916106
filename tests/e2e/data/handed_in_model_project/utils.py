"""A batch iterator of the kind NLP repositories write instead of a DataLoader."""

import torch


class BatchIterator:
    """Batches of ((rows, ids), targets) in a fixed order."""

    def __init__(self, x, y, batch_size):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.n_batches = (len(x) + batch_size - 1) // batch_size

    def __iter__(self):
        ids = torch.arange(len(self.x))
        for i in range(self.n_batches):
            part = slice(i * self.batch_size, (i + 1) * self.batch_size)
            yield (self.x[part], ids[part]), self.y[part]

    def __len__(self):
        return self.n_batches


def build_iterator(x, y, batch_size):
    return BatchIterator(x, y, batch_size)

"""A balanced-batch dataset (deep-text-recognition-benchmark's Batch_Balanced_Dataset): one
DataLoader per data source, an iterator opened over each, and get_batch() taking the next batch
of each, reopening a loader's iterator when its pass ends."""
import torch
from torch.utils.data import DataLoader, TensorDataset


class BalancedBatches:
    def __init__(self, batch_size):
        generator = torch.Generator().manual_seed(0)
        sources = [TensorDataset(torch.randn(64, 4, generator=generator), torch.randn(64, 1, generator=generator)) for _ in range(2)]
        self.loaders = [DataLoader(source, batch_size=batch_size // 2, shuffle=True) for source in sources]
        self.iterators = [iter(loader) for loader in self.loaders]

    def get_batch(self):
        xs, ys = [], []
        for i, iterator in enumerate(self.iterators):
            try:
                x, y = next(iterator)
            except StopIteration:
                self.iterators[i] = iter(self.loaders[i])
                x, y = next(self.iterators[i])
            xs.append(x)
            ys.append(y)
        return torch.cat(xs), torch.cat(ys)

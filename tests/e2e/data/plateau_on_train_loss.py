"""Two ReduceLROnPlateau schedulers: one stepped with the epoch's summed training loss (under
DDP each rank sums its own shard's losses), one with a validation loss over noisy copies of a
held-out set, the noise drawn in the dataset (every rank sees the whole set, but the draws come
from per-rank streams once training starts). Without agreement the ranks would cut their
learning rates at different epochs and drift apart."""
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Noisy(Dataset):
    def __init__(self, n):
        self.x, self.y = torch.randn(n, 4), torch.randn(n, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + torch.randn(4), self.y[i]


torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
loader = DataLoader(data, batch_size=8, shuffle=True)
valid = DataLoader(Noisy(16), batch_size=8)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD([model.weight], lr=0.5)
bias_optimizer = torch.optim.SGD([model.bias], lr=0.5)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=0, threshold=0.2)
bias_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(bias_optimizer, factor=0.5, patience=0, threshold=0.05)
for epoch in range(6):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        bias_optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        bias_optimizer.step()
        total += loss.item()
    scheduler.step(total)
    with torch.no_grad():
        val_loss = sum(torch.nn.functional.mse_loss(model(x), y).item() for x, y in valid)
    bias_scheduler.step(val_loss)
    print(epoch, total, val_loss, optimizer.param_groups[0]["lr"], bias_optimizer.param_groups[0]["lr"])
torch.save(model.state_dict(), "model.pt")

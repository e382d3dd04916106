"""ReduceLROnPlateau stepped with the epoch's summed training loss: under DDP each rank sums
its own shard's losses, and without agreement the ranks would cut their learning rates at
different epochs and drift apart."""
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
loader = DataLoader(data, batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=0, threshold=0.2)
for epoch in range(6):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    scheduler.step(total)
    print(epoch, total, optimizer.param_groups[0]["lr"])
torch.save(model.state_dict(), "model.pt")

"""An epoch's mean training loss and accuracy, only printed (unseen20t dgcnn's shape). The
learning rate is 0, so every sample's loss is fixed: the epoch's mean is a property of the data,
the same for one process on all of it and for the mean over ranks of their shards' means."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
features = torch.randn(64, 4)
labels = (features.sum(1) > 0).long()
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
loader = DataLoader(TensorDataset(features, labels), batch_size=8, shuffle=True)

for epoch in range(2):
    total_loss, correct, count = 0.0, 0, 0
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * x.size(0)
        correct += (logits.argmax(1) == y).sum().item()
        count += x.size(0)
    outstr = "epoch %d loss %.6f" % (epoch, total_loss / count)
    print(outstr)
    accuracy = correct / count
    print(f"epoch {epoch} accuracy {accuracy:.6f}")

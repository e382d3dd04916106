# %% cell 2
# %matplotlib inline
# !pip install --quiet tqdm
import torch
from torch.utils.data import DataLoader, TensorDataset

# %% cell 3
torch.manual_seed(0)
features = torch.randn(64, 4)
targets = features.sum(dim=1, keepdim=True)
loader = DataLoader(TensorDataset(features, targets), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

# %% cell 4
model

# %% cell 5
# %%time
for epoch in range(3):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    pass  # %time pass
    print(f"epoch {epoch}: loss {loss.item():.4f}")

# %% cell 6
print(model.weight.data)

# %% cell 7
# %%bash
# ls -l

# %% cell 9
# files = !ls
message = ("saved %s"
           % "model.pt")
torch.save(model.state_dict(), "model.pt")
print(message)
# loader?

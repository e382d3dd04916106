# %% cell 2
# %matplotlib inline
# !pip install --quiet tqdm
import torch
from torch.utils.data import DataLoader, TensorDataset
import ddpify.runtime as ddpify

ddpify.setup()

# %% cell 3
ddpify.seed(torch.manual_seed, 0)
features = torch.randn(64, 4)
targets = features.sum(dim=1, keepdim=True)
loader = ddpify.distributed_loader(TensorDataset(features, targets), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

# %% cell 4
model
model = ddpify.prepare_model(model)

# %% cell 5
# %%time
for epoch in range(3):
    ddpify.set_epoch(loader, epoch)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    pass  # %time pass
    ddpify.print(f"epoch {epoch}: loss {loss.item():.4f}")

# %% cell 6
ddpify.print(ddpify.unwrap(model).weight.data)

# %% cell 7
# %%bash
# ls -l

# %% cell 9
# files = !ls
message = ("saved %s"
           % "model.pt")
ddpify.save(ddpify.unwrap(model).state_dict(), "model.pt")
ddpify.print(message)
# loader?

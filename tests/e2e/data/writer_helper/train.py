import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from log_utils import Recorder, make_writer

writer = make_writer("runs/loss")
recorder = Recorder("runs/extra")
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8, shuffle=True)
model = nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
step = 0
for epoch in range(2):
    for (x,) in loader:
        loss = (model(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        writer.add_scalar("loss", loss.item(), step)
        recorder.record("loss", loss.item(), step)
        step += 1

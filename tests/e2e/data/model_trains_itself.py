"""A model that trains itself: its optimizer is built in __init__ and its train_ method runs
the forward, the backward and the step (relational-network style); the script only calls
model.train_(x, y), evaluates with model.test_ and saves through model.save_model."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

    def train_(self, x, y):
        self.optimizer.zero_grad()
        loss = self.criterion(self.forward(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def test_(self, x, y):
        with torch.no_grad():
            return (self(x).argmax(1) == y).float().mean().item()

    def save_model(self, path):
        torch.save(self.state_dict(), path)


torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,)))
loader = DataLoader(data, batch_size=8, shuffle=True)
model = Net(0.1)
for epoch in range(2):
    for x, y in loader:
        loss = model.train_(x, y)
    print(epoch, loss, model.test_(x, y))
model.save_model("model.pt")

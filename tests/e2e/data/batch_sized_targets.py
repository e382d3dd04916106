"""A GAN whose loss targets and latent noise are sized by the configured batch size: 544
samples make 17 full batches of 32 in one process, and the script relies on it (no drop_last).
Two spellings: the targets built once at module level, the noise made by a helper function."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

mb_size = 32
Z_dim = 8
X_dim = 6
torch.manual_seed(0)
data = TensorDataset(torch.randn(544, X_dim))
loader = DataLoader(data, batch_size=mb_size, shuffle=True)

G = nn.Sequential(nn.Linear(Z_dim, 16), nn.ReLU(), nn.Linear(16, X_dim))
D = nn.Sequential(nn.Linear(X_dim, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
G_solver = torch.optim.Adam(G.parameters(), lr=1e-3)
D_solver = torch.optim.Adam(D.parameters(), lr=1e-3)
ones_label = torch.ones(mb_size, 1)
zeros_label = torch.zeros(mb_size, 1)


def sample_z():
    return torch.randn(mb_size, Z_dim)


for epoch in range(2):
    for (X,) in loader:
        D_loss = nn.functional.binary_cross_entropy(D(X), ones_label) + nn.functional.binary_cross_entropy(D(G(sample_z())), zeros_label)
        D_solver.zero_grad()
        D_loss.backward()
        D_solver.step()
        G_loss = nn.functional.binary_cross_entropy(D(G(sample_z())), ones_label)
        G_solver.zero_grad()
        G_loss.backward()
        G_solver.step()
    print(epoch, D_loss.item(), G_loss.item())
torch.save(G.state_dict(), "G.pt")

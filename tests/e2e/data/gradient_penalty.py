"""A WGAN-GP step: the discriminator's gradient with respect to interpolated samples is taken
with create_graph=True and penalised in a backward of its own. Through DDP that backward leaves
the last bias without a gradient; the loss gets 0.0 * out.sum() so every parameter is in it."""

import torch
import torch.nn as nn
from torch import autograd
from torch.utils.data import DataLoader, TensorDataset


def main():
    generator = torch.Generator().manual_seed(0)
    loader = DataLoader(TensorDataset(torch.randn(64, 4, generator=generator)), batch_size=8, shuffle=True)
    D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    G = nn.Linear(2, 4)
    d_optimizer = torch.optim.Adam(D.parameters(), 1e-3)
    g_optimizer = torch.optim.Adam(G.parameters(), 1e-3)
    for epoch in range(2):
        for (real,) in loader:
            fake = G(torch.randn(real.size(0), 2))
            d_loss = -D(real).mean() + D(fake.detach()).mean()
            d_optimizer.zero_grad()
            d_loss.backward()
            d_optimizer.step()

            alpha = torch.rand(real.size(0), 1)
            interpolated = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
            out = D(interpolated)
            grad = autograd.grad(outputs=out, inputs=interpolated, grad_outputs=torch.ones(out.size()), create_graph=True)[0]
            d_loss_gp = ((grad.norm(2, dim=1) - 1) ** 2).mean()
            d_optimizer.zero_grad()
            d_loss_gp.backward()
            d_optimizer.step()

            g_loss = -D(G(torch.randn(real.size(0), 2))).mean()
            g_optimizer.zero_grad()
            g_loss.backward()
            g_optimizer.step()
    torch.save(D.state_dict(), "D.pt")


if __name__ == "__main__":
    main()

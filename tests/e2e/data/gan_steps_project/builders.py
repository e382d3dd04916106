"""Optimizers of both models from one helper (GAN_stability's ``build_optimizers``)."""
import torch


def build_optimizers(generator, discriminator, lr):
    g_optimizer = torch.optim.Adam(generator.parameters(), lr=lr, betas=(0.0, 0.99))
    d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=lr, betas=(0.0, 0.99))
    print("optimizers built: Adam, lr", lr)
    return g_optimizer, d_optimizer

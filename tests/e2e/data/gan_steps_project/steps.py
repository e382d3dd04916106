"""Training steps of a GAN, kept apart from the script that runs them (GAN_stability's
``Trainer``): the models and optimizers are handed in, each step takes a batch."""
import torch
import torch.nn.functional as F


def toggle_grad(model, requires_grad):
    for p in model.parameters():
        p.requires_grad_(requires_grad)


class GanSteps:
    def __init__(self, generator, discriminator, g_optimizer, d_optimizer):
        self.generator = generator
        self.discriminator = discriminator
        self.g_optimizer = g_optimizer
        self.d_optimizer = d_optimizer

    def discriminator_step(self, real, z):
        toggle_grad(self.generator, False)
        toggle_grad(self.discriminator, True)
        self.d_optimizer.zero_grad()
        loss = F.softplus(-self.discriminator(real)).mean()
        with torch.no_grad():
            fake = self.generator(z)
        loss = loss + F.softplus(self.discriminator(fake)).mean()
        loss.backward()
        self.d_optimizer.step()
        return loss.item()

    def generator_step(self, z):
        toggle_grad(self.generator, True)
        toggle_grad(self.discriminator, False)
        self.g_optimizer.zero_grad()
        loss = F.softplus(-self.discriminator(self.generator(z))).mean()
        loss.backward()
        self.g_optimizer.step()
        return loss.item()

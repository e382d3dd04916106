"""The project's output helper: samples the model under no_grad and writes them into a folder
it creates when missing (a sample grid in real code; a tensor file here)."""
import os

import torch


def plot_samples(model, noise, folder, epoch):
    if not os.path.exists(folder):
        os.makedirs(folder)
    with torch.no_grad():
        images = model(noise)
    torch.save(images, os.path.join(folder, f"samples_{epoch}.pt"))

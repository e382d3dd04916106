import os
import torch
def make_grid(t, *a, **k): return t
def save_image(tensor, fp, *a, **k):
    """Writes something at fp (so that writes from every rank are visible), no image encoding."""
    with open(fp, "wb") as f:
        torch.save(torch.as_tensor(tensor).detach().cpu()[:1].clone(), f)

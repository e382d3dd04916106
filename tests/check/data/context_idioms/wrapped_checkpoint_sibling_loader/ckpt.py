"""Checkpoints of this toy project keep the DDP wrapper's `module.` keys; loading strips them."""

import torch


def load_weights(model, path):
    state = torch.load(path, map_location="cpu")["model"]
    state = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state.items()}
    model.load_state_dict(state)

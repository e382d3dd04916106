import os
import torch
def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0, **k):
    """unseen20h: torchvision's grid layout (3 x H x W from N x C x h x w, C=1 repeated to 3); normalize ignored."""
    t = torch.stack(list(tensor)) if isinstance(tensor, (list, tuple)) else torch.as_tensor(tensor)
    if t.dim() == 2:
        t = t.unsqueeze(0)
    if t.dim() == 3:
        return torch.cat((t, t, t), 0) if t.size(0) == 1 else t
    if t.size(1) == 1:
        t = torch.cat((t, t, t), 1)
    n = t.size(0)
    xm = min(nrow, n)
    ym = (n + xm - 1) // xm
    h, w = t.size(2) + padding, t.size(3) + padding
    grid = t.new_full((t.size(1), h * ym + padding, w * xm + padding), pad_value)
    for i in range(n):
        y, x = divmod(i, xm)
        grid[:, y * h + padding:y * h + padding + t.size(2), x * w + padding:x * w + padding + t.size(3)] = t[i]
    return grid
def save_image(tensor, fp, *a, **k):
    """Writes something at fp (so that writes from every rank are visible), no image encoding. unseen20k: a list of
    tensors is accepted, as torchvision's save_image (make_grid) accepts it (spatial_transformer's evaluate.py)."""
    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack([torch.as_tensor(t) for t in tensor])
    with open(fp, "wb") as f:
        torch.save(torch.as_tensor(tensor).detach().cpu()[:1].clone(), f)

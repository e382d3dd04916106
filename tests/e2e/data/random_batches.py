"""nanoGPT-style get_batch(): random offsets drawn with torch.randint, for training and for an
evaluation under @torch.no_grad(). Converted and run on 2 ranks, each rank must draw its own
training offsets while both draw the same evaluation offsets; the drawn offsets go to stderr,
which the conversion leaves on every rank."""
import sys

import torch
import torch.nn as nn

torch.manual_seed(1337)
data = torch.randint(0, 32, (2000,))
block_size, batch_size = 8, 4


def get_batch():
    ix = torch.randint(len(data) - block_size, (batch_size,))
    sys.stderr.write(f"draw grad={int(torch.is_grad_enabled())} {ix.tolist()}\n")
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x, y


class Bigram(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(32, 32)

    def forward(self, idx, targets):
        return nn.functional.cross_entropy(self.table(idx).view(-1, 32), targets.view(-1))


@torch.no_grad()
def estimate_loss(model):
    return sum(model(*get_batch()).item() for _ in range(3)) / 3


model = Bigram()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
for step in range(6):
    if step % 3 == 0:
        estimate_loss(model)
    xb, yb = get_batch()
    loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

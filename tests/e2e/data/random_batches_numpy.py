"""Word2Vec-tutorial-style batches: random_batch() draws indices with numpy (unseeded) and builds
the batch by appending one sample per index; evaluate() draws with Python's random.sample under
no_grad. Converted and run on 2 ranks, each rank must draw its own training indices; from the
first such draw the seeded streams are seed + rank, so evaluate()'s own draws differ too (as
after a sharded loader's first batch); the draws go to stderr, which the conversion leaves on
every rank."""
import random
import sys

import numpy as np
import torch
import torch.nn as nn

pairs = [(i % 16, (i * 7) % 16) for i in range(64)]
batch_size = 4


def random_batch():
    inputs, labels = [], []
    index = np.random.choice(range(len(pairs)), batch_size, replace=False)
    sys.stderr.write(f"draw grad=1 {sorted(index.tolist())}\n")
    for i in index:
        inputs.append(np.eye(16)[pairs[i][0]])
        labels.append(pairs[i][1])
    return inputs, labels


@torch.no_grad()
def evaluate(model):
    chosen = random.sample(pairs, 3)
    sys.stderr.write(f"draw grad=0 {sorted(chosen)}\n")
    x = torch.Tensor(np.array([np.eye(16)[a] for a, _ in chosen]))
    return model(x).sum().item()


model = nn.Linear(16, 16)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(6):
    inputs, labels = random_batch()
    loss = nn.functional.cross_entropy(model(torch.Tensor(np.array(inputs))), torch.LongTensor(labels))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 2 == 1:
        evaluate(model)

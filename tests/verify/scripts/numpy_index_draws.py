"""Batches picked by numpy index draws, as a converted Word2Vec tutorial draws them
(``ddpify.rank_random(np.random).choice``): each rank its own; with ``same`` as argument the
script draws from the global numpy stream seeded alike on every rank, the broken hand-written
spelling: every rank trains on the same batches."""
import sys

import numpy as np
import torch

import ddpify.runtime as ddpify

same = len(sys.argv) > 1 and sys.argv[1] == "same"
pairs = [(i % 8, (i * 3) % 8) for i in range(32)]
with ddpify.distributed():
    np.random.seed(0)
    model = ddpify.prepare_model(torch.nn.Linear(8, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(6):
        draw = np.random.choice if same else ddpify.rank_random(np.random).choice
        index = draw(len(pairs), 4, replace=False)
        x = torch.tensor(np.eye(8)[[pairs[i][0] for i in index]], dtype=torch.float32)
        y = torch.tensor([pairs[i][1] for i in index])
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

"""A Word2Vec-tutorial vocabulary: the words of a corpus numbered in the order of a set of
strings, which follows the process's string hashes. Each rank writes the order it got to
stderr; converted, every rank must number the words alike (else one embedding row means
another word on each rank and DDP averages the gradients of different words)."""
import sys

import torch

text = "the quick brown fox jumps over the lazy dog while seven curious cats watch from a red barn roof"
words = text.split()
word_list = list(set(words))
word_dict = {w: i for i, w in enumerate(word_list)}
sys.stderr.write(f"vocabulary {' '.join(word_list)}\n")

model = torch.nn.Embedding(len(word_list), 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    ids = torch.tensor([word_dict[w] for w in words[step : step + 4]])
    loss = model(ids).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

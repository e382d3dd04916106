"""The vocabulary of vocabulary_from_a_set.py built at import time, above a __main__ block that
trains: the conversion wraps the block in ddpify.distributed(), so the group must also be up
when the vocabulary is ordered, or ddpify.agreed could not ask rank 0."""
import sys

import torch

words = "the quick brown fox jumps over the lazy dog while seven curious cats watch from a red barn roof".split()
word_list = list(set(words))
word_dict = {w: i for i, w in enumerate(word_list)}

if __name__ == "__main__":
    sys.stderr.write(f"vocabulary {' '.join(word_list)}\n")
    model = torch.nn.Embedding(len(word_list), 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(4):
        loss = model(torch.tensor([word_dict[w] for w in words[step : step + 4]])).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

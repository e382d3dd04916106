"""DomainBed's shape: an algorithm module of nn.Module classes, each building its networks and
optimizer in its constructor and training them in update()."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Algorithm(nn.Module):
    def __init__(self, num_classes, hparams):
        super().__init__()
        self.hparams = hparams

    def update(self, minibatches):
        raise NotImplementedError


class ERM(Algorithm):
    def __init__(self, num_classes, hparams):
        super().__init__(num_classes, hparams)
        self.featurizer = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.classifier = nn.Linear(8, num_classes)
        self.network = nn.Sequential(self.featurizer, self.classifier)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=hparams["lr"])

    def update(self, minibatches):
        all_x = torch.cat([x for x, y in minibatches])
        all_y = torch.cat([y for x, y in minibatches])
        loss = F.cross_entropy(self.predict(all_x), all_y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}

    def predict(self, x):
        return self.network(x)

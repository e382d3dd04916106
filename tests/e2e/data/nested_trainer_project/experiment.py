"""Holds the network and its results; the training is engine.trainer's."""
import torch

from engine.trainer import Trainer


class Experiment:
    def __init__(self, lr, epochs):
        self.net = torch.nn.Linear(4, 1)
        self.lr, self.epochs = lr, epochs
        self.results = {}

    def train(self, dataset):
        self.trainer = Trainer(self.lr, self.epochs)
        self.net = self.trainer.train(dataset, self.net)
        self.results["loss"] = self.trainer.last_loss

    def save_model(self, path):
        torch.save({"net": self.net.state_dict(), "results": self.results}, path)

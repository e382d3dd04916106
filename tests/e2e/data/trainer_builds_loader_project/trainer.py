"""PyTorch-BYOL's shape: the trainer is handed the models and their optimizer, builds its own
loader from the dataset it is given, trains, and saves its models' state."""
import os

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from utils import make_run_folder


class Trainer:
    def __init__(self, encoder, head, optimizer, batch_size, epochs, out_dir):
        self.encoder = encoder
        self.head = head
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.epochs = epochs
        self.out_dir = out_dir
        make_run_folder(out_dir)

    def train(self, dataset):
        loader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True, drop_last=True)
        for epoch in range(self.epochs):
            for x, y in loader:
                loss = F.mse_loss(self.head(self.encoder(x)), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            print("epoch", epoch, "loss", round(loss.item(), 4))
        self.save(os.path.join(self.out_dir, "model.pth"))

    def save(self, path):
        torch.save({"encoder": self.encoder.state_dict(), "head": self.head.state_dict()}, path)

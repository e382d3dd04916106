import argparse

import torch
import torch.nn as nn
from torch.utils.data import TensorDataset

from trainer import Trainer

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
dataset = TensorDataset(torch.randn(64, 6), torch.randn(64, 1))
encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU()).to(device)
head = nn.Linear(16, 1).to(device)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.05)
trainer = Trainer(encoder=encoder, head=head, optimizer=optimizer, batch_size=8, epochs=args.epochs, out_dir="runs/checkpoints")
trainer.train(dataset)

"""Deep-SVDD's shape: the script builds an experiment object of experiment.py and calls its
train and save methods; the loop itself is in engine/trainer.py, which the experiment builds."""
import argparse

import torch
from torch.utils.data import TensorDataset

from experiment import Experiment

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--out", default="model.pt")
args = parser.parse_args()

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
data = TensorDataset(torch.randn(64, 4, generator=g), torch.randn(64, 1, generator=g))
experiment = Experiment(lr=0.05, epochs=args.epochs)
experiment.train(data)
print("final loss", experiment.results["loss"])
experiment.save_model(args.out)

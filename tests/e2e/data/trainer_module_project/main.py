"""The entry point trains nothing itself: it builds the loader and hands it to the trainer."""

import argparse

from data_loader import get_loader
from trainer import Trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    trainer = Trainer(get_loader(8), {"epochs": args.epochs})
    trainer.train()


if __name__ == "__main__":
    main()

"""One DataLoader call serves every split: the loop over the splits builds it anew from the
split's dataset and trains only when the split is "train" (the others evaluate, without
no_grad). Sharded as a whole, each rank would evaluate half of the valid set."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    generator = torch.Generator().manual_seed(0)
    datasets = {split: TensorDataset(torch.randn(32, 4, generator=generator), torch.randn(32, 1, generator=generator)) for split in ("train", "valid")}
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(2):
        for split in ["train", "valid"]:
            data_loader = DataLoader(datasets[split], batch_size=8, shuffle=split == "train")
            if split == "train":
                model.train()
            else:
                model.eval()
            total = 0.0
            for x, y in data_loader:
                loss = torch.nn.functional.mse_loss(model(x), y)
                if split == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                total += loss.item()
            print(split, epoch, total / len(data_loader))
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main()

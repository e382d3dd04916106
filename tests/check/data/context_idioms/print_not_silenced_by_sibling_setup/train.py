# must-not-report: DDP011
# must-report: DDP012
# misc.init_distributed_mode (a sibling) does not silence print, whatever its name says.
import argparse

import misc
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main(args):
    misc.init_distributed_mode(args)
    print("arguments:", args)
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 1).cuda(args.gpu), device_ids=[args.gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(args.gpu)), y.cuda(args.gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: {loss.item():.4f}")


if __name__ == "__main__":
    main(argparse.ArgumentParser().parse_args())

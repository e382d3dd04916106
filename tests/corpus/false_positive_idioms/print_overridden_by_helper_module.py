# ddpify-corpus idiom: print replaced by setup_for_distributed() in a helper module
# must-not-report: DDP012
# The helper (here `trainutils`, in real code utils.py / util/misc.py / distributed.py)
# initialises the process group and then replaces builtins.print with a version that
# only prints on rank 0 (or with force=True). Every print after init_distributed_mode()
# therefore runs on one rank only. Seen in BLIP, ALBEF, vicreg, MAE-style and DETR-style
# repositories (70 of the 91 false DDP012 findings in the corpus).
import argparse

import torch
import torch.distributed as dist
import trainutils


def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("epoch done, last loss", loss.item())


def main(args):
    trainutils.init_distributed_mode(args)  # calls setup_for_distributed(args.rank == 0)
    print("Creating model")
    model = torch.nn.Linear(8, 2).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    sampler = torch.utils.data.DistributedSampler(dataset)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, sampler=sampler)
    print("Start training")
    for epoch in range(3):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(argparse.ArgumentParser().parse_args())

# ddpify-corpus idiom: a fixed seed on every rank in a script that draws nothing random later
# must-not-report: DDP011
# torch.manual_seed(0) makes the initial weights identical (DDP would broadcast rank 0's
# anyway); afterwards nothing is random: no dropout, no augmentation, no DataLoader workers,
# no torch.rand*. The same seed on every rank costs nothing here.
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.arange(16.0).reshape(4, 4) / 16
    targets = inputs.sum(dim=1, keepdim=True)
    for _ in range(5):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# ddpify-corpus idiom: a deliberately per-rank message that names the rank
# must-not-report: DDP012
# One line per process saying which rank/seed/device it got is the point of the print.
# Seen in DiT train.py and sample_ddp.py.
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = rank % torch.cuda.device_count()
    seed = 1234 * dist.get_world_size() + rank
    torch.manual_seed(seed)
    torch.cuda.set_device(device)
    print(f"Starting rank={rank}, seed={seed}, world_size={dist.get_world_size()}.")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).to(device), device_ids=[device])
    model(torch.randn(2, 4, device=device)).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

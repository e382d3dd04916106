# ddpify-corpus idiom: the torch seed is drawn from another RNG that was seeded per rank
# must-not-report: DDP011
# np.random.seed(seed * world_size + rank) first, then torch.manual_seed(np.random.randint(...)):
# each rank gets its own torch seed. Seen in NVlabs/edm training_loop.py.
import numpy as np
import torch
import torch.distributed as dist


def main(seed=0):
    dist.init_process_group("nccl")
    np.random.seed((seed * dist.get_world_size() + dist.get_rank()) % (1 << 31))
    torch.manual_seed(np.random.randint(1 << 31))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
    model(torch.randn(2, 4)).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

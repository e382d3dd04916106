# ddpify-corpus idiom: a file per rank by design, saved and read back by its own rank
# must-not-report: DDP004, DDP005
# Each rank keeps its own feature queue on disk (f"queue{rank}.pth") and reloads it when the
# job restarts: the files never clash, and each holds tensors of the rank's own GPU, so the
# load without map_location puts them back where they came from.
import os

import torch
import torch.distributed as dist


def main(output_dir="queues", queue_length=64):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    queue_path = os.path.join(output_dir, "queue" + str(rank) + ".pth")
    queue = None
    if os.path.isfile(queue_path):
        queue = torch.load(queue_path)["queue"]
    if queue is None:
        queue = torch.zeros(queue_length, 8, device="cuda")
    for step in range(3):
        queue = torch.cat([torch.randn(4, 8, device="cuda"), queue[:-4]])
    torch.save({"queue": queue}, queue_path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

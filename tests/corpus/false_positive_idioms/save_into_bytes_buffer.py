# ddpify-corpus idiom: torch.save into an in-memory buffer on every rank
# must-not-report: DDP005
# The state is serialised into io.BytesIO, a buffer, not a file: nothing is written to disk,
# so every rank may do it (here to compare a checksum of the weights across ranks).
import io
import zlib

import torch
import torch.distributed as dist


def weights_checksum(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return zlib.crc32(buffer.getvalue())


def main():
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
    checksum = torch.tensor([weights_checksum(model.module)], dtype=torch.int64)
    gathered = [torch.zeros_like(checksum) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, checksum)
    assert all(int(c) == int(checksum) for c in gathered)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

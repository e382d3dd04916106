# ddpify-corpus idiom: torch.load without map_location in the one-process-per-node branch,
# while the one-process-per-GPU branch maps to its own GPU
# must-not-report: DDP004
# With args.gpu None a single process drives every GPU of the node (DataParallel), so the
# tensors may go back to the devices they were saved from; each per-GPU process maps to its
# own GPU. The pytorch/examples imagenet resume.
import argparse

import torch
import torch.distributed as dist


def main_worker(gpu, args):
    args.gpu = gpu
    if args.distributed:
        dist.init_process_group("nccl", init_method=args.dist_url, world_size=args.world_size, rank=args.rank)
    model = torch.nn.Linear(8, 2)
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(args.gpu), device_ids=[args.gpu])
    else:
        model = torch.nn.DataParallel(model).cuda()
    if args.resume:
        if args.gpu is None:
            checkpoint = torch.load(args.resume)
        else:
            checkpoint = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
        model.load_state_dict(checkpoint["state_dict"])
    if not args.distributed or args.rank == 0:
        torch.save({"state_dict": model.state_dict()}, "checkpoint.pth.tar")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--dist-url", default="env://")
    main_worker(None, parser.parse_args())

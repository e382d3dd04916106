from .dist import should_write, world_rank

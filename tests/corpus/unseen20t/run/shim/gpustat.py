"""unseen20f: gpustat stand-in (improved-wgan-pytorch's training_utils imports it; showMemoryUsage is never called)."""
class GPUStatCollection:
    @staticmethod
    def new_query():
        raise RuntimeError("gpustat stand-in: no GPU")

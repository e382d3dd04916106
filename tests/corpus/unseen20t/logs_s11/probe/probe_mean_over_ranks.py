import os
import ddpify.runtime as ddpify
with ddpify.distributed():
    r = int(os.environ.get("RANK", 0))
    v = [1.0, 3.0][r]
    print(f"rank {r}: mean_over_ranks({v}) = {ddpify.mean_over_ranks(v)}", flush=True)

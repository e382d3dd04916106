import os, sys, time
import ddpify.runtime as ddpify
class W:
    def __init__(self, log_dir):
        os.makedirs(log_dir)
dev = ddpify.device()
t0 = time.time()
r = int(os.environ.get("RANK", 0))
base = "/tmp/s11probe/out_" + os.environ["PROBE_ID"]
if r == 0:
    time.sleep(5)
w = ddpify.rank_zero(W)(log_dir=os.path.join(base, "tb"))
with open(f"/tmp/s11probe/res_{os.environ['PROBE_ID']}_r{r}.txt", "w") as f:
    f.write(f"rank {r} waited {time.time()-t0:.1f}s: {base} exists={os.path.isdir(base)} tb exists={os.path.isdir(os.path.join(base,'tb'))} w={type(w).__name__}\n")

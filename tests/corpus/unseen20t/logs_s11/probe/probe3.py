import os, sys, time, logging
from tensorboardX import SummaryWriter
import ddpify.runtime as ddpify
dev = ddpify.device()
t0 = time.time()
r = int(os.environ.get("RANK", 0))
base = "/tmp/s11probe/p3_" + os.environ["PROBE_ID"]
w = ddpify.rank_zero(SummaryWriter)(log_dir=os.path.join(base, "tb"))
t1 = time.time()
ex = os.path.isdir(base)
try:
    h = logging.FileHandler(os.path.join(base, "x.log")); res = "FileHandler ok"
except Exception as e:
    res = f"FileHandler {type(e).__name__}"
with open(f"/tmp/s11probe/res3_{os.environ['PROBE_ID']}_r{r}.txt", "w") as f:
    f.write(f"rank {r}: rank_zero call took {t1-t0:.1f}s; base exists after it={ex}; {res}; w={type(w).__name__}\n")

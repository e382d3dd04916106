import os, time, importlib.util
_spec = importlib.util.spec_from_file_location("_tbx_shim", "/work/main/tests/corpus/unseen20t/run/shim/tensorboardX.py")
_m = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(_m)
class SummaryWriter(_m.SummaryWriter):
    def __init__(self, *a, **k):
        if os.environ.get("RANK") == "0":
            time.sleep(float(os.environ.get("DELAY_RANK0", "2")))
        super().__init__(*a, **k)

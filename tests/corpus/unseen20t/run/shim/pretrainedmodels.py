"""unseen20h: import-only stand-in for pretrainedmodels (Person_reID_baseline_pytorch's model.py imports it; the NAS
model that uses it is never built in the corpus runs)."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def _no(*a, **k):
        raise RuntimeError("pretrainedmodels stand-in: %s is not available in the corpus runs" % name)
    return _no

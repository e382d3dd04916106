"""unseen20h: import-only stand-in for pytorch-metric-learning (Person_reID_baseline_pytorch's train.py imports losses
and miners at the top; the runs use none of them)."""
import types


def _ns(kind):
    def getattr_(name):
        if name.startswith("__"):
            raise AttributeError(name)

        def _no(*a, **k):
            raise RuntimeError("pytorch_metric_learning stand-in: %s.%s is not available" % (kind, name))
        return _no
    m = types.ModuleType("pytorch_metric_learning." + kind)
    m.__getattr__ = getattr_
    return m


losses = _ns("losses")
miners = _ns("miners")

"""unseen20p: import-only stand-in (RelativisticGAN's fid.py imports tensorflow and builds tf.ConfigProto() at import;
the runs never compute FID). Only ConfigProto (an attribute bag) exists; anything else raises."""


class _Bag:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        b = _Bag()
        object.__setattr__(self, name, b)
        return b


def ConfigProto(*a, **k):
    return _Bag()


def __getattr__(name):
    raise RuntimeError("tensorflow stand-in: %s is not available in the corpus runs" % name)

"""unseen20r: import-only stand-in for sentencepiece (WickedFoxes/simple_task_pytorch imports it at the top of its IMDB / WMT16 /
BERT modules, registered beside the CIFAR ones the corpus run uses); any attribute is a callable that raises."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def _no(*a, **k):
        raise RuntimeError("sentencepiece stand-in: sentencepiece.%s is not available in the corpus runs" % name)
    return _no

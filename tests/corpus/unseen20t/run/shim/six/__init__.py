"""unseen20i: stand-in for six (not installed): six.moves.urllib only (Omniglot download() imports it before it
checks that the data exists; the runs never download)."""

# unseen20m: six.BytesIO (deep-text-recognition-benchmark's LmdbDataset buffers each image with it)
from io import BytesIO, StringIO  # noqa: E402,F401

# unseen20q: six.iteritems / string_types (torchnet 0.0.4's transform.py and meters)
def iteritems(d, **kw):
    return iter(d.items(**kw))


string_types = (str,)

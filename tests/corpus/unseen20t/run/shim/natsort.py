"""unseen20m: natsort stand-in (deep-text-recognition-benchmark's dataset.py imports natsorted for RawDataset)."""


def natsorted(seq, *a, **k):
    return sorted(seq)

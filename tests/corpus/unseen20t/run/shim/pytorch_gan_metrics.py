"""unseen20j: import-only stand-in for pytorch_gan_metrics (Inception weights cannot be had offline). The corpus runs
pass --norecord, so the score functions are never called; calling one raises."""


def _no(*a, **k):
    raise RuntimeError("pytorch_gan_metrics stand-in: Inception metrics are not available offline")


get_inception_score_and_fid = get_inception_score = get_fid = _no

"""unseen20g: torchvision.datasets.utils stand-ins (SCAN's data/cifar.py): check_integrity says whether the file exists
(no md5: the run scripts' setup() writes small stand-in files); downloads raise (the runs never download)."""
import os


def check_integrity(fpath, md5=None):
    return os.path.isfile(fpath)


def _no(*a, **k):
    raise RuntimeError("torchvision stand-in: no downloads in the corpus runs")


download_url = download_and_extract_archive = extract_archive = _no

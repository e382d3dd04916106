"""unseen20g: torchvision.datasets.utils stand-ins (SCAN's data/cifar.py): check_integrity says whether the file exists
(no md5: the run scripts' setup() writes small stand-in files); downloads raise (the runs never download)."""
import os


def check_integrity(fpath, md5=None):
    return os.path.isfile(fpath)


def _no(*a, **k):
    raise RuntimeError("torchvision stand-in: no downloads in the corpus runs")


download_url = download_and_extract_archive = extract_archive = download_file_from_google_drive = _no  # unseen20h: + google drive (ddim)


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):  # unseen20h: ddim's datasets/lsun.py imports it
    return value


def iterable_to_str(iterable):  # unseen20h: ddim's datasets/lsun.py imports it
    return "'" + "', '".join([str(item) for item in iterable]) + "'"

"""unseen20m: kagglehub stand-in: dataset_download(handle) returns $KAGGLEHUB_DIR (a folder written by a run script's
setup()); nothing is downloaded."""
import os


def dataset_download(handle, *a, **k):
    return os.environ["KAGGLEHUB_DIR"]

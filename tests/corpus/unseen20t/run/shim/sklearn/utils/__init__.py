"""sklearn.utils stand-in: multiclass.unique_labels only (LDAM-DRW utils.py imports it for its confusion-matrix plot)."""
from . import multiclass  # noqa

__version__ = "0.20.0"
from . import datasets, transforms, utils, models  # noqa

__version__ = "0.19.0"  # unseen20m: was "0.20.0"; cs-kd (datasets.py) takes any version starting "0.2" for torchvision 0.2.0
from . import datasets, transforms, utils, models  # noqa

"""torchvision.models.inception stand-in (package form, for `from torchvision.models.inception import inception_v3`)."""
import torch.nn as nn
from . import inception_v3  # noqa
InceptionA, InceptionC, InceptionE, Inception3 = (type(n, (nn.Module,), {}) for n in ("InceptionA", "InceptionC", "InceptionE", "Inception3"))

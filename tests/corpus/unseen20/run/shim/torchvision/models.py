import types
import torch.nn as nn
def inception_v3(*a, **k): return nn.Identity()
inception = types.SimpleNamespace(**{n: type(n, (nn.Module,), {}) for n in ("InceptionA", "InceptionC", "InceptionE", "Inception3")})

"""unseen20g: import-only stand-in for timm (DomainBed's networks.py imports it at the top; the ViT featurizers that use
it are never built in the corpus runs)."""


def create_model(*a, **k):
    raise RuntimeError("timm stand-in: no timm models in the corpus runs")
# unseen20o: a package now, with timm.models.layers.LayerNorm2d (vision-transformers-cifar10's models/dyt.py imports it at
# the top; the DyT model is not built in the corpus run).

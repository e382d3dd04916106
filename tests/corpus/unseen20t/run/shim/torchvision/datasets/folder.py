"""unseen20g: torchvision.datasets.folder importable (DomainBed's datasets.py imports it)."""
from . import ImageFolder, DatasetFolder  # noqa
IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def default_loader(path):
    from PIL import Image
    return Image.open(path).convert("RGB")

"""Stand-in for pillow (not installed here): only what the corpus scripts use on arrays (fromarray, size, resize)."""
from . import ImageFile  # noqa  (unseen20f)
from . import ImageOps, ImageEnhance, ImageFilter  # noqa  (unseen20g)
__version__ = "0.0-stand-in"  # unseen20g: DomainBed prints PIL.__version__

"""Stand-in for pillow (not installed here): only what the corpus scripts use on arrays (fromarray, size, resize)."""
from . import ImageFile  # noqa  (unseen20f)

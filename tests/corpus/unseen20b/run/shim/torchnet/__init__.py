from . import meter  # noqa

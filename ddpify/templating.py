"""The one place that knows where the jinja2 templates live (``templates/`` in a checkout,
``ddpify/templates`` in an installed wheel), so every renderer loads them the same way."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

_PACKAGE_DIR = Path(__file__).resolve().parent
# FileSystemLoader skips whichever of the two does not exist.
SEARCH_PATH = [str(_PACKAGE_DIR / "templates"), str(_PACKAGE_DIR.parent / "templates")]


def environment(**options: Any) -> jinja2.Environment:
    """A strict environment (an undefined variable is an error, never an empty string) that
    keeps the final newline and does not HTML-escape: the templates produce code. jinja2 is
    imported here, on first use: ``ddpify check`` renders nothing unless it applies a fix."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(SEARCH_PATH),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        **options,
    )

"""Import-only stand-in (pillow is not installed here): the scripts import PIL in helpers the runs never call."""

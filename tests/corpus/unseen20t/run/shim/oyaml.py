"""unseen20m: oyaml stand-in = PyYAML (LynnHo's pylib.save_yaml dumps the argument dict)."""
from yaml import *  # noqa: F401,F403

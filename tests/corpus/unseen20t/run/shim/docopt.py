"""unseen20j: docopt stand-in (not installed here). Only the usage form glow-pytorch's train.py uses: positional
<args> (and [--flag] options ignored) of the first 'Usage:' line, filled in order from sys.argv[1:]."""
import re
import sys


def docopt(doc, argv=None, **k):
    argv = sys.argv[1:] if argv is None else argv
    lines = [l.strip() for l in doc.splitlines()]
    usage = next(l for i, l in enumerate(lines) if i > 0 and lines[i - 1].lower().startswith("usage"))
    names = re.findall(r"<[^>]+>", usage)
    if len(argv) < len(names):
        print(doc)
        raise SystemExit(1)
    return dict(zip(names, argv))

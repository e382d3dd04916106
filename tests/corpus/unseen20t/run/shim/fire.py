"""unseen20l: offline stand-in for python-fire's Fire(fn): --name value / --name=value pairs (values read with
ast.literal_eval, else kept as strings; a bare --flag is True), passed to fn as keyword arguments."""
import ast
import sys


def _value(s):
    try:
        return ast.literal_eval(s)
    except Exception:
        return s


def Fire(component=None, command=None, name=None):
    argv = list(sys.argv[1:] if command is None else command)
    kw, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("--"):
            raise SystemExit("fire stand-in: positional arguments are not supported (%r)" % a)
        if "=" in a:
            k, v = a[2:].split("=", 1)
            i += 1
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            k, v = a[2:], argv[i + 1]
            i += 2
        else:
            k, v = a[2:], "True"
            i += 1
        kw[k.replace("-", "_")] = _value(v)
    return component(**kw)

#!/usr/bin/env python3
"""obj_type.py FILE...: the class of the object each file unpickles to (a whole-model torch.save: bare module or a
DDP / DataParallel wrapper)."""
import sys
import torch

for f in sys.argv[1:]:
    try:
        o = torch.load(f, map_location="cpu", weights_only=False)
    except Exception as e:  # noqa
        print(f"[obj] {f}: not loadable ({type(e).__name__}: {e})")
        continue
    print(f"[obj] {f}: {type(o).__module__}.{type(o).__name__}")

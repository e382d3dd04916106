"""ckpt_keys.py FILE...: for each checkpoint, how many state-dict keys start with 'module.' (nested dicts searched)."""
import sys
import torch


def keys(o, out):
    if isinstance(o, dict):
        for k, v in o.items():
            if isinstance(k, str):
                out.append(k)
            keys(v, out)
    return out


for f in sys.argv[1:]:
    try:
        o = torch.load(f, map_location="cpu", weights_only=False)
    except Exception as e:  # noqa
        print(f"[ckpt] {f}: not a torch file ({type(e).__name__})")
        continue
    ks = keys(o, [])
    print(f"[ckpt] {f}: {len(ks)} keys, {sum(k.startswith('module.') for k in ks)} with 'module.', {sum(k.startswith('module.module.') for k in ks)} with 'module.module.'")

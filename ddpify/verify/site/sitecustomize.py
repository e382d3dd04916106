"""Imported by every Python process of a ``ddpify verify`` run, whose PYTHONPATH starts with
this folder: starts the recorder in the ranks (``ddpify.verify.recorder``), then runs the
``sitecustomize`` this one shadows, if the environment has one."""

import os


def _record() -> None:
    if os.environ.get("DDPIFY_VERIFY_DIR") and os.environ.get("RANK") is not None:
        try:
            from ddpify.verify import recorder

            recorder.install()
        except Exception as exc:  # the run goes on; the verdict then says what is missing
            import sys

            print(f"ddpify verify: the recorder did not start in this process: {exc!r}", file=sys.stderr)


def _chain() -> None:
    import importlib.machinery
    import importlib.util
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None and spec.origin != os.path.abspath(__file__):
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_record()
_chain()

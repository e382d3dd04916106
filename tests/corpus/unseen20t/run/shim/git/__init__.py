"""unseen20i: stand-in for GitPython (not installed): Repo(...).head.object.hexsha is a fixed string (pytorch-GANs puts
the commit hash into each saved training state)."""


class _Obj:
    hexsha = "0" * 40


class _Head:
    object = _Obj()


class Repo:
    def __init__(self, *a, **k):
        self.head = _Head()

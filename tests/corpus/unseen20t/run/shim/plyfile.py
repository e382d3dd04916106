"""unseen20i: import-only stand-in for plyfile (pointnet.pytorch's dataset.py imports it for ModelNet, which the run does
not use); reading a .ply raises."""


class PlyData:
    @staticmethod
    def read(*a, **k):
        raise RuntimeError("plyfile stand-in: PlyData.read is not available")


class PlyElement:
    pass

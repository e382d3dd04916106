"""unseen20g: PIL.ImageFilter names (filters are applied as the identity by the Image stand-in)."""


class GaussianBlur:
    def __init__(self, radius=2):
        self.radius = radius


BLUR = SMOOTH = SHARPEN = EDGE_ENHANCE = None

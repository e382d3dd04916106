"""unseen20g: PIL.ImageEnhance stand-ins: enhance() returns a copy of the image unchanged."""


class _Enhance:
    def __init__(self, img):
        self.img = img

    def enhance(self, factor):
        return self.img.copy()


Color = Contrast = Brightness = Sharpness = _Enhance

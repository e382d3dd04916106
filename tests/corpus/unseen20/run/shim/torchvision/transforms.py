class _Id:
    def __init__(self, *a, **k): pass
    def __call__(self, x): return x
Compose = Resize = CenterCrop = RandomHorizontalFlip = ToTensor = Normalize = RandomCrop = _Id

"""unseen20l: vgg16 with VGG16's real feature layout (random weights), narrowed to 1/8 width (SRGAN's loss.py takes
list(vgg16(pretrained=True).features)[:31])."""
import torch.nn as nn


def vgg16(*a, **k):
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    layers, c = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            w = max(v // 8, 4)
            layers += [nn.Conv2d(c, w, 3, padding=1), nn.ReLU(inplace=True)]
            c = w
    m = nn.Module()
    m.features = nn.Sequential(*layers)
    return m


def vgg11(*a, num_classes=1000, **k):
    """unseen20m: VGG11's layout (features at 1/8 width, AdaptiveAvgPool2d(7), the 4096-wide classifier whose
    classifier[6] a script may replace), random weights (pneumonia_classification's models.get_model)."""
    import torch
    cfg = [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]
    layers, c = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            w = max(v // 8, 4)
            layers += [nn.Conv2d(c, w, 3, padding=1), nn.ReLU(inplace=True)]
            c = w

    class VGG(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
            self.classifier = nn.Sequential(nn.Linear(c * 49, 4096), nn.ReLU(True), nn.Dropout(), nn.Linear(4096, 4096),
                                            nn.ReLU(True), nn.Dropout(), nn.Linear(4096, num_classes))

        def forward(self, x):
            return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    return VGG()

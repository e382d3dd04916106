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

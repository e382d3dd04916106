import types
import torch.nn as nn

class _Weights:
    DEFAULT = IMAGENET1K_V1 = IMAGENET1K_V2 = None
ResNet18_Weights = ResNet50_Weights = VGG19_Weights = _Weights

class _TinyResNet(nn.Module):
    """Stand-in for torchvision's ResNet: a tiny conv net with ResNet's attribute names
    (conv1, bn1, relu, maxpool, layer1..layer4, avgpool, fc with fc.in_features); random weights."""
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(2)
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.layer2 = self.layer3 = self.layer4 = nn.Identity()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, num_classes)
    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.avgpool(self.layer4(self.layer3(self.layer2(self.layer1(x))))).flatten(1)
        return self.fc(x)

ResNet = _TinyResNet  # unseen20f: importable name (ncsn's models/scorenet.py)

def resnet18(*a, **k):
    """unseen20m: the tiny stand-in with ResNet-18's 512-channel layer4 (knowledge-distillation-study's ResNet18
    hard-codes output_size 512), its layer4 output 4x2 like the resnet50 stand-in's (attention-transfer losses compare
    the student's and the teacher's spatial maps)."""
    m = _TinyResNet()
    m.layer4 = nn.Sequential(nn.AdaptiveAvgPool2d((4, 2)), nn.Conv2d(8, 512, 1))
    m.fc = nn.Linear(512, k.get("num_classes", 1000))
    return m


resnet34 = resnet18


def resnet50(*a, **k):
    """unseen20h: the tiny stand-in with ResNet-50's 2048-channel layer4 (Person_reID's ft_net hard-codes 2048)."""
    m = _TinyResNet()
    m.layer4 = nn.Sequential(nn.AdaptiveAvgPool2d((4, 2)), nn.Conv2d(8, 2048, 1))
    m.fc = nn.Linear(2048, k.get("num_classes", 1000))
    return m


resnet101 = resnet152 = resnet50

def vgg19(*a, **k):
    """VGG19's real feature layout (random weights), narrowed to 1/8 width except the 512-channel relu4_1."""
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"]
    layers, c = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            w = v if v == 512 else max(v // 8, 4)
            layers += [nn.Conv2d(c, w, 3, padding=1), nn.ReLU(inplace=True)]
            c = w
    m = nn.Module()
    m.features = nn.Sequential(*layers)
    return m

def inception_v3(*a, **k): return nn.Identity()
inception = types.SimpleNamespace(inception_v3=inception_v3, **{n: type(n, (nn.Module,), {}) for n in ("InceptionA", "InceptionC", "InceptionE", "Inception3")})


from .vgg import vgg16, vgg11  # noqa: E402  (unseen20l; vgg11 unseen20m)


def _vgg_unused(*a, **k):
    """unseen20n: import-only names (thuml/CDAN network.py builds a dict of them at import; the corpus run uses DTN)."""
    raise RuntimeError("torchvision stand-in: this VGG variant is import-only in the corpus runs")


vgg13 = vgg11_bn = vgg13_bn = vgg16_bn = vgg19_bn = _vgg_unused


def densenet161(*a, **k):
    """unseen20q: import-only name (Show-Attend-and-Tell's encoder.py imports it; the corpus run uses resnet152)."""
    raise RuntimeError("densenet161 stand-in: not used in the corpus runs")

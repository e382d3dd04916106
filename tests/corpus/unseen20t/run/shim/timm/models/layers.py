"""unseen20o: timm.models.layers.LayerNorm2d stand-in: LayerNorm over the channels of an NCHW tensor (as timm's)."""
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)

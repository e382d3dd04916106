import torch.nn as nn
class BertPooler(nn.Module): pass
class BertSelfAttention(nn.Module): pass

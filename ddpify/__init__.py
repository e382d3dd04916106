"""ddpify: turn a single-GPU PyTorch training script into a correct DDP script.

Importing this package stays cheap on purpose: no torch, no libcst. The converter lives in
``ddpify.api`` / ``ddpify.convert``, the code converted scripts import in ``ddpify.runtime``.
"""

__version__ = "0.1.0"

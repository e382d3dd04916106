"""``ddpify verify``: run a DDP training script (or a single-GPU one, converted first) under
torchrun with a recorder in every rank, and judge what it did, property by property.

``launch`` (the parent side, no torch) starts the run; ``recorder`` and the ``hooks_*`` modules
run inside the ranks; ``records`` reads their JSON lines back; ``judge_*`` and ``verdict`` turn
them into the table. ``session.verify`` ties them together for the CLI.
"""

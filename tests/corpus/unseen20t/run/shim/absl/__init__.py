"""unseen20j: absl-py stand-in (not installed here): the flags / app subset pytorch-gan-collections uses."""

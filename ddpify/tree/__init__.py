"""Infrastructure over libcst trees: flat traversals, qualified names, positions, metadata.

Knows nothing of DDP: the converter, the linter and the analysis build on it, never the reverse."""

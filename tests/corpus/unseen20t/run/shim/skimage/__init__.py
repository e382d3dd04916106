"""unseen20g: import-only stand-in for scikit-image (stargan-v2's core/wing.py: skimage.filters.gaussian)."""

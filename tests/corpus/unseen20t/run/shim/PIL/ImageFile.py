"""unseen20f: PIL.ImageFile importable (improved-wgan-pytorch sets ImageFile.LOAD_TRUNCATED_IMAGES)."""
LOAD_TRUNCATED_IMAGES = False

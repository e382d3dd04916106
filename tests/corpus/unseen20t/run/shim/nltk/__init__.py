"""unseen20m: nltk stand-in: only nltk.metrics.distance.edit_distance (deep-text-recognition-benchmark's test.py)."""

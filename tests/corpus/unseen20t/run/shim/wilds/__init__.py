"""unseen20g: import-only stand-in for wilds (DomainBed's datasets.py imports two dataset classes at the top)."""

import random
def train_test_split(items, test_size=0.25, random_state=None):
    items = list(items); random.Random(random_state).shuffle(items)
    n = int(round(len(items) * test_size)); return items[n:], items[:n]

def f1_score(y, p, labels=None, average=None):
    y = list(map(int, y)); p = list(map(int, p)); fs = []
    for c in labels:
        tp = sum(a == c and b == c for a, b in zip(y, p)); fp = sum(a != c and b == c for a, b in zip(y, p)); fn = sum(a == c and b != c for a, b in zip(y, p))
        fs.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(fs) / len(fs)

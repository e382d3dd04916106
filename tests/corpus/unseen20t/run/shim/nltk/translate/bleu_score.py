"""unseen20q: corpus_bleu stand-in: clipped n-gram precision geometric mean with a brevity penalty (no smoothing),
enough for Show-Attend-and-Tell's validate() to print a number; 0.0 when any weighted precision is zero."""
import math
from collections import Counter


def _ngrams(s, n):
    return Counter(tuple(s[i:i + n]) for i in range(len(s) - n + 1))


def corpus_bleu(list_of_references, hypotheses, weights=(0.25, 0.25, 0.25, 0.25), *a, **k):
    num = [0] * len(weights); den = [0] * len(weights); hl = rl = 0
    for refs, hyp in zip(list_of_references, hypotheses):
        hl += len(hyp)
        rl += min((abs(len(r) - len(hyp)), len(r)) for r in refs)[1] if refs else 0
        for i in range(len(weights)):
            h = _ngrams(hyp, i + 1); m = Counter()
            for r in refs:
                m |= _ngrams(r, i + 1)
            num[i] += sum(min(c, m[g]) for g, c in h.items()); den[i] += max(1, sum(h.values()))
    if any(w and not n for w, n in zip(weights, num)):
        return 0.0
    s = sum(w * math.log(n / d) for w, n, d in zip(weights, num, den) if w)
    bp = 1.0 if hl > rl else math.exp(1 - rl / max(hl, 1))
    return bp * math.exp(s)

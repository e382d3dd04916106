"""unseen20m: Levenshtein distance as nltk's edit_distance (substitution cost 1, no transpositions)."""


def edit_distance(s1, s2, substitution_cost=1, transpositions=False):
    prev = list(range(len(s2) + 1))
    for i, a in enumerate(s1, 1):
        cur = [i]
        for j, b in enumerate(s2, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (0 if a == b else substitution_cost)))
        prev = cur
    return prev[-1]

def score(x):
    return -x

best = max([1, 2, 3], key=lambda v: score(v))

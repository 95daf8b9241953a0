import functools

def combine(a, b):
    return a + b

def total(xs):
    return functools.reduce(combine, xs, 0)

total([1, 2, 3])

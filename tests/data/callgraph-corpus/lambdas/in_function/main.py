def square(x):
    return x * x

def compute(xs):
    f = lambda v: square(v)
    g = lambda v: v
    return [f(x) for x in xs]

compute([1, 2])

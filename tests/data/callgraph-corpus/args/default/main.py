def identity(x):
    return x

def double(x):
    return x * 2

def apply(x, fn=identity):
    return fn(x)

apply(3)
apply(4, double)

def apply(fn, value):
    return fn(value)

def ignore(fn):
    return None

apply(lambda v: v * 2, 3)
ignore(lambda v: v * 3)

def process(x, key=lambda v: -v):
    return key(x)

process(1)

def inner():
    yield 1

def outer():
    yield 0
    yield from inner()

list(outer())

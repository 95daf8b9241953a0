def helper():
    pass

def produce():
    helper()
    yield 1

g = produce()

def numbers():
    yield 1
    yield 2

def make():
    return numbers()

for n in make():
    pass

def a():
    pass

def b():
    pass

def steps():
    yield a
    yield b

for s in steps():
    s()

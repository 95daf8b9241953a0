def unreachable():
    pass

def f():
    return 1
    unreachable()

f()

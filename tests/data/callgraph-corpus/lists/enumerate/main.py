def s0():
    pass

def s1():
    pass

def s2():
    pass

for i, fn in enumerate([s0, s1, s2]):
    if i % 2 == 0:
        fn()

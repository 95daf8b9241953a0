FLAG = False

def g():
    pass

def h():
    pass

if FLAG:
    g()
h()

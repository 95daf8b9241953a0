def leaf():
    pass

def middle(cb):
    inner(cb)

def inner(cb2):
    cb2()

middle(leaf)

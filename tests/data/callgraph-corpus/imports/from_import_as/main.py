from to_import import func as g

def func():
    pass

g()

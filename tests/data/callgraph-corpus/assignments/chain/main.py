def f():
    pass

a = b = f
b()

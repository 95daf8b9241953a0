def leaf():
    pass

make = lambda: (lambda: leaf())
make()()

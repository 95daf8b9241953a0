def one():
    pass

def two():
    pass

def three():
    pass

head, *rest = [one, two, three]
for fn in rest:
    fn()

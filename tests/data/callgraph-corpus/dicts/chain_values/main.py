import itertools

def p():
    pass

def q():
    pass

def r():
    pass

groups = {"one": [p, q], "two": [r]}
for fn in itertools.chain(*groups.values()):
    fn()

def first():
    pass

def second():
    pass

def third():
    pass

def run_all(*fns):
    for fn in fns:
        fn()

run_all(first, second)

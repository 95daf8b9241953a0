seen = []

def mark(fn):
    seen.append(fn)
    return fn

@mark
def task():
    pass

task()

def passthrough(fn):
    return fn

def work():
    pass

passthrough(work)()

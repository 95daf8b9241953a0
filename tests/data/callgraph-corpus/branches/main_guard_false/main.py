def enabled():
    return False

def debug_dump():
    pass

DEBUG = enabled()

def step():
    if DEBUG:
        debug_dump()

step()

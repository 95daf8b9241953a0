def outer(fn):
    def outer_wrapper():
        return fn()
    return outer_wrapper

def inner(fn):
    def inner_wrapper():
        return fn()
    return inner_wrapper

@outer
@inner
def base():
    pass

base()

def trace(fn):
    def wrapper(*args):
        return fn(*args)
    return wrapper

@trace
def work(x):
    return x

work(1)

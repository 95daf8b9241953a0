import functools

@functools.cache
def load_table():
    return {"a": 1}

def lookup(k):
    return load_table()[k]

lookup("a")
lookup("a")

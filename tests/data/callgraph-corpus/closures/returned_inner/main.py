def make():
    def inner():
        return 1
    return inner

f = make()
f()

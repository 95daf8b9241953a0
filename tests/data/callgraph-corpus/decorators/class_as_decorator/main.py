class CountCalls:
    def __init__(self, fn):
        self.fn = fn
        self.n = 0

    def __call__(self, *args):
        self.n += 1
        return self.fn(*args)

@CountCalls
def greet(name):
    return name

greet("a")

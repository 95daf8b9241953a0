def square(x):
    return x * x

def all_squares(xs):
    return [square(x) for x in xs]

all_squares([1, 2])

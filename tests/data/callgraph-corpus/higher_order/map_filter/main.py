def keep(x):
    return x > 1

def square(x):
    return x * x

list(map(square, filter(keep, [1, 2, 3])))

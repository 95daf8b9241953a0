def len(x):
    return 0

def count(xs):
    return len(xs)

count([1])

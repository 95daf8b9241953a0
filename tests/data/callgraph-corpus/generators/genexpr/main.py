def cost(x):
    return x + 1

def total(xs):
    return sum(cost(x) for x in xs)

total([1, 2])

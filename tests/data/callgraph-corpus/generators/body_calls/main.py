def compute(i):
    return i * 2

def values(n):
    for i in range(n):
        yield compute(i)

total = sum(values(3))

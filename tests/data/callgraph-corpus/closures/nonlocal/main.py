def counter(step):
    total = 0
    def bump():
        nonlocal total
        total = step(total)
        return total
    return bump

def plus_one(n):
    return n + 1

b = counter(plus_one)
b()
b()

import functools

def power(base, exp):
    return base ** exp

square = functools.partial(power, exp=2)
square(3)

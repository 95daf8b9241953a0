def pick():
    return 5

def check(n):
    return n > 3

if (fn := check)(pick()):
    fn(1)

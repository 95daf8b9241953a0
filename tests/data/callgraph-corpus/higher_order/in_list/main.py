def zero():
    pass

def one():
    pass

table = [zero, one]
table[1]()

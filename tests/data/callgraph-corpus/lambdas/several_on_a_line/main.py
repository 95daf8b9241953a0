def one():
    pass

def two():
    pass

pair = (lambda: one(), lambda: two())
pair[1]()

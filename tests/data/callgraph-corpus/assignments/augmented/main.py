def a():
    pass

def b():
    pass

handlers = [a]
handlers += [b]
for h in handlers:
    h()

def record(v):
    pass

def sink():
    while True:
        v = yield
        record(v)

s = sink()
next(s)
s.send(1)

def a():
    pass

def b():
    pass

fns = []
fns.append(a)
fns.append(b)
for f in fns:
    f()

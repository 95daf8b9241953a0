def a():
    pass

def b():
    pass

def c():
    pass

for fn in (a, b):
    fn()
for fn in {c}:
    fn()

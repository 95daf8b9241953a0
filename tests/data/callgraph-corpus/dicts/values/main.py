def a():
    pass

def b():
    pass

hooks = {"x": a, "y": b}
for fn in hooks.values():
    fn()

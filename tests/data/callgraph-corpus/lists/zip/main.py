def load():
    pass

def save():
    pass

for name, fn in zip(["load", "save"], [load, save]):
    fn()

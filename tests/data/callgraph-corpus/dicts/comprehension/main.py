def h1():
    pass

def h2():
    pass

table = {fn.__name__: fn for fn in [h1, h2]}
table["h2"]()

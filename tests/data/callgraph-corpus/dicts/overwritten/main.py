def f1():
    pass

def f2():
    pass

d = {"a": f1}
d["a"] = f2
d["a"]()

ops = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
}

def run(name):
    return ops[name](4, 2)

run("sub")

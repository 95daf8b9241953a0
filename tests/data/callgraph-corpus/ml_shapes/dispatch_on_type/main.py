def handle_int(x):
    return x

def handle_str(x):
    return x

HANDLERS = {int: handle_int, str: handle_str}

def process(x):
    return HANDLERS[type(x)](x)

process("a")

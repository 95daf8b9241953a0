def default():
    pass

def replacement():
    pass

current = default

def install():
    global current
    current = replacement

install()
current()

import b

def start():
    b.middle()

def finish():
    pass

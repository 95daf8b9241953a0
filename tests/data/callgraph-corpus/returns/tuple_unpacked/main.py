def enc():
    pass

def dec():
    pass

def codec():
    return enc, dec

e, d = codec()
d()

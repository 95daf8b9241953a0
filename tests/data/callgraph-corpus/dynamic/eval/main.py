def target():
    pass

def other():
    pass

eval("target()")

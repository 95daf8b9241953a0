def outer():
    def inner():
        helper()
    return inner

def helper():
    pass

outer()()

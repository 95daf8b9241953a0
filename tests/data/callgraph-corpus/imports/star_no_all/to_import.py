def func():
    pass

def _private():
    pass

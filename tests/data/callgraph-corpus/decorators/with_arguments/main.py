def repeat(n):
    def deco(fn):
        def wrapper():
            for _ in range(n):
                fn()
        return wrapper
    return deco

@repeat(2)
def hello():
    pass

hello()

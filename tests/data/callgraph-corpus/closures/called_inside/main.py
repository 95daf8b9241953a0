def outer(x):
    def square(y):
        return y * y
    def unused():
        return 0
    return square(x)

outer(3)

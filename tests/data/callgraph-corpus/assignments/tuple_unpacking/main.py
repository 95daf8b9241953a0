def left():
    pass

def right():
    pass

a, b = left, right
a, b = b, a
a()

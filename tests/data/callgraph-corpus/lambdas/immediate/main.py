def value():
    return 3

result = (lambda: value() * 2)()

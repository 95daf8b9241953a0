def a():
    pass

def b():
    pass

def c():
    pass

pipeline = [a, b, c]
for step in pipeline[1:]:
    step()

def pre():
    pass

def post():
    pass

def pre2():
    pass

def post2():
    pass

for before, after in [(pre, post), (pre2, post2)]:
    before()
    after()

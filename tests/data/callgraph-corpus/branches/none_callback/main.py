def never():
    pass

def run(fn=None):
    if fn is not None:
        fn()

run()
run(None)

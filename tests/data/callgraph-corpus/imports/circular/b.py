import a

def middle():
    a.finish()

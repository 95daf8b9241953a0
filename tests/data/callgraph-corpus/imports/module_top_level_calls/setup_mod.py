def init():
    pass

def ready():
    pass

init()

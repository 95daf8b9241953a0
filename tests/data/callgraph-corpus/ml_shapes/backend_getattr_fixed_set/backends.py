def cpu():
    return True

def cuda():
    return False

def mps():
    return False

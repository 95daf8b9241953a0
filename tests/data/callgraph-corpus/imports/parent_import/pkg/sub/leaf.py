from .. import shared

def go():
    shared()

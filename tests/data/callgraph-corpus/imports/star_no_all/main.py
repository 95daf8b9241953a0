from to_import import *

def _private():
    pass

func()
_private()

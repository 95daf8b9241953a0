__all__ = ["exported"]

def exported():
    pass

def helper():
    pass

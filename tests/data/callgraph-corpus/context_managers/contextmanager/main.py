import contextlib

def acquire():
    pass

def release():
    pass

@contextlib.contextmanager
def resource():
    acquire()
    yield
    release()

def use():
    with resource():
        pass

use()

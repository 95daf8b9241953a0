import sys

def win_impl():
    pass

def posix_impl():
    pass

if sys.platform == "win32":
    impl = win_impl
else:
    impl = posix_impl

impl()

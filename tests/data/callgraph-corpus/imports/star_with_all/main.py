def helper():
    pass

from to_import import *

exported()
helper()

from . import jit

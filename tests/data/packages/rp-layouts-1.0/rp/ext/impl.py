# _native is a compiled submodule (no source here), as numpy.linalg._umath_linalg is.
from rp.ext import _native


def use():
    return _native.run()

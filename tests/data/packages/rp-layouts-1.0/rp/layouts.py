# Each function reaches its flagged operation through one import layout.
from typing import TYPE_CHECKING

import rp.tools.shell as sh
from . import lazy
from . import jit as kernels
from .jit import fp4
from .circle_a import spin

try:
    from ._fast import compile_kernel
except ImportError:
    from ._slow import compile_kernel

if TYPE_CHECKING:
    from ._typed import helper
else:
    from ._runtime import helper


def via_import_as():
    return sh.run("ls")


def via_from_import_as():
    return kernels.cpp_ext.ver()


def via_from_import():
    return fp4.gen()


def via_try_except(src):
    return compile_kernel(src)


def via_type_checking(path):
    return helper(path)


def via_getattr():
    return lazy.thing()


def via_circle():
    return spin()


def via_shadowed_package():
    # rp.shadow is a package whose __init__ binds `shadow` to the function of its own
    # submodule rp.shadow.shadow (sympy.simplify's layout).
    from rp.shadow import shadow

    return shadow()


def via_compiled_submodule():
    from .ext import impl

    return impl.use()


try:
    xrange = xrange
except NameError:
    xrange = range


def via_compat_alias(n):
    return list(xrange(n))


def via_compiled_star():
    from . import ext

    return ext.fast_kernel()

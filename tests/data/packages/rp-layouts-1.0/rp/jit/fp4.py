from .cpp_ext import ver


def gen():
    return ver()

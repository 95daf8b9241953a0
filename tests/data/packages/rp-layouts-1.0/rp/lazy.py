import importlib


def __getattr__(name):
    return importlib.import_module("rp._impl_" + name)

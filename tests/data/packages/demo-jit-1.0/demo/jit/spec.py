import functools
import os
from pathlib import Path

from . import loader
from .loader import Loader


@functools.cache
def get_module(name):
    spec = build_spec(name)
    return Loader(spec).load()


def prepare():
    open("/dev/null").close()
    get_module("warmup")


def build_spec(name):
    return {"name": name, "flags": default_flags(), "post": finish(name)}


def default_flags():
    return ["-O3"] + more_flags(0)


def more_flags(level):
    if level > 1:
        return default_flags()
    return []


def finish(spec):
    return loader.check_tools(spec)


def read_spec(path):
    def cached():
        return os.path.exists(path + ".cache")

    return cached() or Path(path).read_text()

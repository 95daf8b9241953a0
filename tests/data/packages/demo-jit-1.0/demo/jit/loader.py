import threading

from jitbase import tools
from jitbase.tools import run_compiler

__all__ = ["Loader", "check_tools"]

_LOCK = threading.Lock()


class Base:
    def compile(self, spec):
        return run_compiler(spec)


class Loader(Base):
    def __init__(self, spec):
        self.spec = spec

    def load(self):
        self.compile(self.spec)
        return getattr(self, "module")()


def check_tools(spec):
    return tools.check_tools(spec)

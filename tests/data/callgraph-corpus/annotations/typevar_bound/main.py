from typing import TypeVar

class Base:
    def load(self):
        pass

class Impl(Base):
    def load(self):
        pass

T = TypeVar("T", bound=Base)

def reload(x: T) -> T:
    x.load()
    return x

reload(Impl())

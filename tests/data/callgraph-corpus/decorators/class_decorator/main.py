def dataclass_like(cls):
    cls.tagged = True
    return cls

@dataclass_like
class Point:
    def __init__(self, x):
        self.x = x

Point(1)

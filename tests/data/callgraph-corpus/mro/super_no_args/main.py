class Base:
    def __init__(self):
        self.ready = True

class Child(Base):
    def __init__(self):
        super().__init__()
        self.extra = 1

Child()

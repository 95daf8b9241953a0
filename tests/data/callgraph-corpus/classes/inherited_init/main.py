class Base:
    def __init__(self):
        self.setup()

    def setup(self):
        pass

class Derived(Base):
    def setup(self):
        pass

Derived()

class Base:
    def act(self):
        pass

class Special(Base):
    def act(self):
        pass

def run(x: Base):
    x.act()

run(Special())

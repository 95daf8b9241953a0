class Base:
    def run(self):
        self.hook()

    def hook(self):
        pass

class One(Base):
    def hook(self):
        pass

class Two(Base):
    def hook(self):
        pass

One().run()

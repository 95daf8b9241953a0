import base

class Child(base.Base):
    def run(self):
        return self.helper()

Child().run()

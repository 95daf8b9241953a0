class Greeter:
    def greet(self):
        return self.name()

    def name(self):
        return "x"

g = Greeter()
g.greet()

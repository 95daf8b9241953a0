class Meta(type):
    def __call__(cls, *args):
        inst = super().__call__(*args)
        inst.ready()
        return inst

class Service(metaclass=Meta):
    def __init__(self, n):
        self.n = n

    def ready(self):
        pass

Service(1)

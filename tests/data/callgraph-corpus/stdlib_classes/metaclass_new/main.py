REGISTRY = {}

class Registering(type):
    def __new__(mcs, name, bases, ns):
        cls = super().__new__(mcs, name, bases, ns)
        REGISTRY[name] = cls
        return cls

def define():
    class Model(metaclass=Registering):
        def fit(self):
            pass
    return Model

define()
REGISTRY["Model"]().fit()

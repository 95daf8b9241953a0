import abc

class Loader(abc.ABC):
    @abc.abstractmethod
    def load(self):
        ...

    def run(self):
        return self.load()

class JsonLoader(Loader):
    def load(self):
        return {}

JsonLoader().run()

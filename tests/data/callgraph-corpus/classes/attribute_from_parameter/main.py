class Engine:
    def start(self):
        pass

class Car:
    def __init__(self, engine):
        self.engine = engine

    def drive(self):
        self.engine.start()

Car(Engine()).drive()

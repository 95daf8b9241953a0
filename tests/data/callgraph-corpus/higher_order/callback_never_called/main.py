def on_event():
    pass

class Emitter:
    def __init__(self):
        self.handlers = []

    def subscribe(self, fn):
        self.handlers.append(fn)

e = Emitter()
e.subscribe(on_event)

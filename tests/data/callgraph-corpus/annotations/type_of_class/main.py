class Backend:
    def __init__(self):
        pass

    def run(self):
        pass

class Runner:
    backend_cls: type[Backend] = Backend

    def go(self):
        self.backend_cls().run()

Runner().go()

class Worker:
    def __init__(self):
        self.action = self.work

    def work(self):
        pass

    def go(self):
        self.action()

Worker().go()

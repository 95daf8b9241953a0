class Fast:
    def __init__(self):
        pass

    def run(self):
        pass

def pick():
    return Fast

pick()().run()

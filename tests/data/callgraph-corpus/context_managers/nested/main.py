class Outer:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        pass

class Inner:
    def __init__(self, tag):
        self.tag = tag

    def __enter__(self):
        return self

    def __exit__(self, *a):
        pass

with Outer(), Inner("x"):
    pass

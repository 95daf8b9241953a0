class Outer:
    class Inner:
        def __init__(self):
            pass

        def ping(self):
            pass

    def make(self):
        return Outer.Inner()

Outer().make().ping()

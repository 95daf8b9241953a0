class Base:
    def __init__(self):
        self.x = 1

    def helper(self):
        return self.x

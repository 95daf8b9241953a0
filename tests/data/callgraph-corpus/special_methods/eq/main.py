class Key:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return self.v == other.v

a = Key(1)
same = a == Key(1)

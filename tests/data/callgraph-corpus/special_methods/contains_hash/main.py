class Vocab:
    def __contains__(self, word):
        return word == "a"

class Token:
    def __hash__(self):
        return 1

v = Vocab()
found = "a" in v
counts = {Token(): 1}

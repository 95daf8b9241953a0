class Table:
    def __init__(self):
        self.rows = {}

    def __getitem__(self, k):
        return self.rows[k]

    def __setitem__(self, k, v):
        self.rows[k] = v

t = Table()
t["a"] = 1
t["a"]

class Cache:
    def __init__(self):
        self.d = {"a": 1}

    def __delitem__(self, k):
        del self.d[k]

c = Cache()
del c["a"]

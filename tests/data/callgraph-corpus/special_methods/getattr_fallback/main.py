class Proxy:
    def __init__(self):
        self.real = 1

    def __getattr__(self, name):
        return self.fallback

    def fallback(self):
        return 0

p = Proxy()
p.real
p.missing()

class Counter:
    def inc(self):
        pass

c = Counter()
Counter.inc(c)

class Timer:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def lap(self):
        pass

with Timer() as t:
    t.lap()

class Stream:
    def __iter__(self):
        return self

    def __next__(self):
        return 1

s = iter(Stream())
next(s)

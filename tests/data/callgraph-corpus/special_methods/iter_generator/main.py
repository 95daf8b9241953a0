class Dataset:
    def __iter__(self):
        for i in range(2):
            yield self.load(i)

    def load(self, i):
        return i

for item in Dataset():
    pass

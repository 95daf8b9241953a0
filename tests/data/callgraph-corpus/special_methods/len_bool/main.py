class Batch:
    def __len__(self):
        return 2

    def __bool__(self):
        return True

b = Batch()
n = len(b)
if b:
    pass

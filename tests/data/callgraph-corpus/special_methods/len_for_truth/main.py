class Bag:
    def __len__(self):
        return 0

def check(bag):
    if bag:
        return 1
    return 0

check(Bag())

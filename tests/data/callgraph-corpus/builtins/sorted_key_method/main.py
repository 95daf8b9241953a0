class Item:
    def __init__(self, w):
        self.w = w

    def weight(self):
        return self.w

items = [Item(2), Item(1)]
ordered = sorted(items, key=Item.weight)

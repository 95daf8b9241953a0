class Box:
    def __class_getitem__(cls, item):
        return cls

IntBox = Box[int]

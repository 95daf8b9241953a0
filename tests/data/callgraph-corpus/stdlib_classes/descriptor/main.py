class Field:
    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        return 7

class Record:
    size = Field()

Record().size

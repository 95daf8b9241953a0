class Config:
    def __init__(self, data):
        self.data = data

    @classmethod
    def from_dict(cls, d):
        return cls(d)

Config.from_dict({})

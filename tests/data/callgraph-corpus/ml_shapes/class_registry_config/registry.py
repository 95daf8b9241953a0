_CLASSES = {}

def register(name):
    def add(cls):
        _CLASSES[name] = cls
        return cls
    return add

def build(cfg):
    cls = _CLASSES[cfg["optimizer"]]
    return cls(cfg["lr"])

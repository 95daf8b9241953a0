from registry import build, register

@register("adam")
class Adam:
    def __init__(self, lr):
        self.lr = lr

    def step(self):
        pass

@register("sgd")
class SGD:
    def __init__(self, lr):
        self.lr = lr

    def step(self):
        pass

config = {"optimizer": "adam", "lr": 0.1}
opt = build(config)
opt.step()

class Module:
    def __init__(self):
        self._hooks = []

    def register_hook(self, fn):
        self._hooks.append(fn)

    def __call__(self, x):
        for h in self._hooks:
            h(x)
        return self.forward(x)

    def forward(self, x):
        raise NotImplementedError

class Linear(Module):
    def forward(self, x):
        return x * 2

def log_input(x):
    pass

m = Linear()
m.register_hook(log_input)
m(3)

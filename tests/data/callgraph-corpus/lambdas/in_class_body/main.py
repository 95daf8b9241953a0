def norm(x):
    return x

class Layer:
    act = lambda self, x: norm(x)

    def forward(self, x):
        return self.act(x)

Layer().forward(1)

class Model:
    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        return x

m = Model()
m(1)

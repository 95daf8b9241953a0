class Adam:
    def step(self):
        pass

class SGD:
    def step(self):
        pass

optimizers = {"adam": Adam(), "sgd": SGD()}
optimizers["sgd"].step()

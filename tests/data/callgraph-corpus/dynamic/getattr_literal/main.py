class Ops:
    def relu(self):
        pass

    def tanh(self):
        pass

fn = getattr(Ops(), "relu")
fn()

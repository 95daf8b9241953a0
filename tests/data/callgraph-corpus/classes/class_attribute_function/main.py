def default_loss(x):
    return x

class Trainer:
    loss = default_loss

    def step(self):
        return Trainer.loss(1)

Trainer().step()

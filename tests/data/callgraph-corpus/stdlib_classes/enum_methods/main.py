import enum

class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"

    def is_training(self):
        return self is Mode.TRAIN

Mode.TRAIN.is_training()
Mode("eval").is_training()

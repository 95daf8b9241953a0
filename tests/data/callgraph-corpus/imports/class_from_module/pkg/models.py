class Net:
    def __init__(self, width):
        self.width = width

    def forward(self):
        return self.width

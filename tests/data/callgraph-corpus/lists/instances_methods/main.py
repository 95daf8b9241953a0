class Conv:
    def forward(self):
        pass

class Linear:
    def forward(self):
        pass

layers = [Conv(), Linear()]
for layer in layers:
    layer.forward()

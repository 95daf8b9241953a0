class Layer:
    def reset(self):
        pass

Registry = dict[str, list[Layer]]

def reset_all(reg: Registry):
    for layers in reg.values():
        for layer in layers:
            layer.reset()

reset_all({"enc": [Layer()]})

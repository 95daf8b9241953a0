PLUGINS = []

class Plugin:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        PLUGINS.append(cls)

class Csv(Plugin):
    def read(self):
        pass

for p in PLUGINS:
    p().read()

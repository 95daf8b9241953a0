import importlib

def __getattr__(name):
    if name == "heavy":
        return importlib.import_module(".heavy", __name__)
    raise AttributeError(name)

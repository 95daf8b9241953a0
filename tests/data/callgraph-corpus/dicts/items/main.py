def on_start(name):
    pass

def on_stop(name):
    pass

events = {"start": on_start, "stop": on_stop}

def fire():
    for name, handler in events.items():
        if name == "stop":
            handler(name)

fire()

def cb():
    return 42

def other():
    return 0

def configure(**options):
    hook = options["hook"]
    return hook()

configure(hook=cb, unused=other)

import backends

def available():
    found = []
    for name in ("cpu", "cuda"):
        probe = getattr(backends, name)
        if probe():
            found.append(name)
    return found

available()

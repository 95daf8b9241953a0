def timed(fn):
    def run(*args):
        return fn(*args)
    return run

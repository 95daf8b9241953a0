from . import helpers

def run():
    helpers.work()

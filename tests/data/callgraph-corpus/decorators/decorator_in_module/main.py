from deco import timed

@timed
def step():
    pass

step()

def chosen():
    pass

def not_chosen():
    pass

globals()["chosen"]()

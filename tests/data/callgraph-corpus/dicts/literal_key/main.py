def add():
    pass

def remove():
    pass

actions = {"add": add, "remove": remove}
actions["add"]()

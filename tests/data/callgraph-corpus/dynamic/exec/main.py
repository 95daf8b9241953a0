def hidden():
    pass

def run(code):
    exec(code)

run("hidden()")

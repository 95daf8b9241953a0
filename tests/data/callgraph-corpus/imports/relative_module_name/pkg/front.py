from .back import handle

def go():
    handle()

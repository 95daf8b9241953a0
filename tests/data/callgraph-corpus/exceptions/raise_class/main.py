class Failure(Exception):
    def __init__(self):
        super().__init__("failed")

def work():
    raise Failure

try:
    work()
except Failure:
    pass

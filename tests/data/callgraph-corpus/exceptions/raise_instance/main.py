class AppError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code

    def describe(self):
        return str(self.code)

def fail():
    raise AppError(3)

try:
    fail()
except AppError as e:
    e.describe()

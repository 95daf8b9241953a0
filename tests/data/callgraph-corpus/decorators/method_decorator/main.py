def checked(fn):
    def wrapper(self, *args):
        return fn(self, *args)
    return wrapper

class Service:
    @checked
    def run(self):
        return 1

Service().run()

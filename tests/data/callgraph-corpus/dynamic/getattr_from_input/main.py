class Cmd:
    def help(self):
        pass

    def quit(self):
        pass

try:
    name = input()
except EOFError:
    name = "help"
getattr(Cmd(), name)()

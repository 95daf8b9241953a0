class Util:
    @classmethod
    def make(cls):
        return cls()

    @staticmethod
    def helper():
        return 1

    def use(self):
        return self.helper()

u = Util.make()
u.use()
Util.helper()

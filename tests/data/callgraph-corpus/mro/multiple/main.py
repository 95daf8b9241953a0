class A:
    def who(self):
        return "A"

class B:
    def who(self):
        return "B"

    def only_b(self):
        return "b"

class C(A, B):
    pass

c = C()
c.who()
c.only_b()

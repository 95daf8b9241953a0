class A:
    def func(self):
        return "A"

class B(A):
    pass

class C(A):
    def func(self):
        return "C"

class D(B, C):
    pass

D().func()

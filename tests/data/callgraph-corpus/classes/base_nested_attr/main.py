class A:
    class B:
        def hello(self):
            pass

class C(A.B):
    pass

C().hello()

class A:
    def step(self):
        pass

class B(A):
    def step(self):
        pass

class C(B):
    def step(self):
        super(B, self).step()

C().step()

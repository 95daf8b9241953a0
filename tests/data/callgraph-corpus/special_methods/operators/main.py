class Vec:
    def __init__(self, x):
        self.x = x

    def __add__(self, other):
        return Vec(self.x + other.x)

    def __mul__(self, k):
        return Vec(self.x * k)

    def __radd__(self, n):
        return Vec(self.x + n)

v = Vec(1) + Vec(2)
w = v * 3
z = 1 + w

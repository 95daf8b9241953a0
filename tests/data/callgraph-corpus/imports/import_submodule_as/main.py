import pkg.sub as s

s.func()

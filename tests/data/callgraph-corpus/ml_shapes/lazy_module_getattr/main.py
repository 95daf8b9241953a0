import lazy

lazy.heavy.func()

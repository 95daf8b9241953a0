m = __import__("plugin")
m.func()

def recover():
    pass

def ok():
    return 1

try:
    ok()
except KeyError:
    recover()
else:
    pass

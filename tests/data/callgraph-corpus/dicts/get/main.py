def known():
    pass

def fallback():
    pass

table = {"k": known}
table.get("k", fallback)()
table.get("missing", fallback)()

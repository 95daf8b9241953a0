def lower(s):
    return s.lower()

def upper(s):
    return s.upper()

def fmt(s, *, transform=lower):
    return transform(s)

fmt("Hi", transform=upper)

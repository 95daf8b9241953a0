class Tag:
    def __str__(self):
        return "tag"

    def __repr__(self):
        return "Tag()"

def show(t):
    s = str(t)
    r = repr(t)
    return f"{t}!"

show(Tag())

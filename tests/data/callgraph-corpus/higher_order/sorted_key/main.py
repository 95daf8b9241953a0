def by_len(s):
    return len(s)

def order(words):
    return sorted(words, key=by_len)

order(["bb", "a"])

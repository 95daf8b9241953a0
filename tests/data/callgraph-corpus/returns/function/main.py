def impl():
    pass

def get():
    return impl

get()()

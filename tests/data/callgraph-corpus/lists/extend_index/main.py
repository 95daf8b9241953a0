def first():
    pass

def last():
    pass

fns = [first]
fns.extend([last])
fns[-1]()

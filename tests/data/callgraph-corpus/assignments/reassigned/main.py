def first():
    pass

def second():
    pass

def run():
    fn = first
    fn()
    fn = second
    fn()

run()

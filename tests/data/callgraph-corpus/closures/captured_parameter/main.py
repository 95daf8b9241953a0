def make_logger(sink):
    def log(msg):
        sink(msg)
    return log

def to_file(msg):
    pass

def to_null(msg):
    pass

log = make_logger(to_file)
log("x")

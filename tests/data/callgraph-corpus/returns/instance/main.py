class Conn:
    def query(self):
        pass

def connect():
    return Conn()

connect().query()

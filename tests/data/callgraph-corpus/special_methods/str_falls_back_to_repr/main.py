class Point:
    def __repr__(self):
        return "Point()"

def label(p):
    return str(p)

label(Point())

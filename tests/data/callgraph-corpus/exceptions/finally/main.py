def cleanup():
    pass

def risky():
    raise ValueError("x")

def guarded():
    try:
        risky()
    finally:
        cleanup()

try:
    guarded()
except ValueError:
    pass

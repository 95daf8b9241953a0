def attempt():
    return 1

def on_success():
    pass

try:
    attempt()
except Exception:
    pass
else:
    on_success()

def handler(a, b, scale=1):
    return (a + b) * scale

def log(*args, **kwargs):
    return forward(*args, **kwargs)

def forward(fn, *args, **kwargs):
    return fn(*args, **kwargs)

log(handler, 1, 2, scale=3)

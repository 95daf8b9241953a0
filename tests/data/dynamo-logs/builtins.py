import sys, logging, torch
log = logging.getLogger("lib")
def f(x):
    print("hello", x.shape)
    return x + 1
def g(x):
    log.warning("value %s", 3)
    return x * 2
def h(x):
    n = x.sum().item()
    return x * n
def k(x):
    l = x.tolist()
    return x + len(l)
fns = {"f": f, "g": g, "h": h, "k": k}
if sys.argv[1] == "fullgraph":
    torch.compile(f, fullgraph=True)(torch.ones(3))
else:
    for fn in fns.values():
        torch.compile(fn)(torch.ones(3))

import sys

import torch


def summary(out):
    if isinstance(out, (tuple, list)):
        return ", ".join(summary(t) for t in out)
    return "%s %s sum=%.4f" % (str(out.dtype).replace("torch.", ""), list(out.shape), out.double().sum().item())


def check(fn, *args):
    if "--eager" in sys.argv:  # fills FlashInfer's on-disk JIT cache, nothing else
        print("eager only:", summary(fn(*[a.clone() if torch.is_tensor(a) else a for a in args])))
        return
    # compiled first: an eager call before it would warm the library's in-process caches
    got = torch.compile(fn, fullgraph=True)(*[a.clone() if torch.is_tensor(a) else a for a in args])
    want = fn(*[a.clone() if torch.is_tensor(a) else a for a in args])
    print("compiled:", summary(got))
    print("eager:", summary(want))
    try:
        torch.testing.assert_close(got, want)
    except AssertionError as e:
        print("COMPILED DIFFERS FROM EAGER:", e)
        sys.exit(1)
    print("compiled equals eager")

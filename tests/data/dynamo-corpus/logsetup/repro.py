import sys

import torch

import logsetup


def fn(x):
    return logsetup.apply_rotary(x)


def summary(out):
    if isinstance(out, (tuple, list)):
        return ", ".join(summary(t) for t in out)
    return "%s %s sum=%.3f" % (str(out.dtype).replace("torch.", ""), list(out.shape), out.double().sum().item())


torch.manual_seed(0)
x = torch.randn(8, 16, dtype=torch.bfloat16)
# compiled first: an eager call before it would warm the library's caches and hide the break
got = torch.compile(fn, backend="eager", fullgraph=True)(x)
want = fn(*[t.clone() for t in (x,)])
print("compiled:", summary(got))
print("eager:", summary(want))
try:
    torch.testing.assert_close(got, want)
except AssertionError as e:
    print(e)
    sys.exit(1)

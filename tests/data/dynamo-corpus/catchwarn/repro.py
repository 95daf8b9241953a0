import sys

import torch

import catchwarn


def fn(x, w):
    return catchwarn.equi_linear(x, w) * 2


def summary(out):
    if isinstance(out, (tuple, list)):
        return ", ".join(summary(t) for t in out)
    return "%s %s sum=%.3f" % (str(out.dtype).replace("torch.", ""), list(out.shape), out.double().sum().item())


torch.manual_seed(0)
x = torch.randn(4, 16, dtype=torch.bfloat16)
w = torch.randn(24, 16)  # fp32 weight, another width
# compiled first: an eager call before it would warm the library's caches and hide the break
got = torch.compile(fn, backend="inductor", fullgraph=True)(x, w)
want = fn(*[t.clone() for t in (x, w,)])
print("compiled:", summary(got))
print("eager:", summary(want))
try:
    torch.testing.assert_close(got, want)
except AssertionError as e:
    print(e)
    sys.exit(1)

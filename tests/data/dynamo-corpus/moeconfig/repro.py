import sys

import torch

import moeconfig


def fn(x, w1, ids):
    return moeconfig.fused_experts(x, w1, ids)


def summary(out):
    if isinstance(out, (tuple, list)):
        return ", ".join(summary(t) for t in out)
    return "%s %s sum=%.3f" % (str(out.dtype).replace("torch.", ""), list(out.shape), out.double().sum().item())


torch.manual_seed(0)
x = torch.randn(8, 64, dtype=torch.bfloat16)
w1 = torch.randn(4, 16, 64, dtype=torch.bfloat16)
ids = torch.randint(0, 4, (8,))
# compiled first: an eager call before it would warm the library's caches and hide the break
got = torch.compile(fn, backend="inductor", fullgraph=True)(x, w1, ids)
want = fn(*[t.clone() for t in (x, w1, ids,)])
print("compiled:", summary(got))
print("eager:", summary(want))
try:
    torch.testing.assert_close(got, want)
except AssertionError as e:
    print(e)
    sys.exit(1)

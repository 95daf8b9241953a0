import sys

import torch

import skippedtorch


def fn(decay, k, v):
    return skippedtorch.wkv(decay, k, v)


def summary(out):
    if isinstance(out, (tuple, list)):
        return ", ".join(summary(t) for t in out)
    return "%s %s sum=%.3f" % (str(out.dtype).replace("torch.", ""), list(out.shape), out.double().sum().item())


torch.manual_seed(0)
decay = torch.randn(16)
k = torch.randn(8, 16, dtype=torch.bfloat16)
v = torch.randn(8, 16, dtype=torch.bfloat16)
# compiled first: an eager call before it would warm the library's caches and hide the break
got = torch.compile(fn, backend="eager", fullgraph=True)(decay, k, v)
want = fn(*[t.clone() for t in (decay, k, v,)])
print("compiled:", summary(got))
print("eager:", summary(want))
try:
    torch.testing.assert_close(got, want)
except AssertionError as e:
    print(e)
    sys.exit(1)

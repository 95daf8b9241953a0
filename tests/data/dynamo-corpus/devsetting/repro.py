import sys

import torch

import devsetting


def fn(A, B):
    return devsetting.dequant_matmul(A, B) + 1.0


def summary(out):
    if isinstance(out, (tuple, list)):
        return ", ".join(summary(t) for t in out)
    return "%s %s sum=%.3f" % (str(out.dtype).replace("torch.", ""), list(out.shape), out.double().sum().item())


torch.manual_seed(0)
A = torch.randn(8, 16, dtype=torch.bfloat16)  # activations
B = torch.randn(16, 16)  # fp32 weights
# compiled first: an eager call before it would warm the library's caches and hide the break
got = torch.compile(fn, backend="inductor", fullgraph=True)(A, B)
want = fn(*[t.clone() for t in (A, B,)])
print("compiled:", summary(got))
print("eager:", summary(want))
try:
    torch.testing.assert_close(got, want)
except AssertionError as e:
    print(e)
    sys.exit(1)

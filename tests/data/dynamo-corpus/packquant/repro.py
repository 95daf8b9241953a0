import sys

import torch

import packquant


def fn(x):
    packed, scales = packquant.int4_quantize(x)
    # the graph reads both outputs (a checksum of the codes, scaled per row)
    return packed, scales, (packed.float().sum(dim=-1) - 8.0 * packed.shape[-1]) * scales


def summary(out):
    if isinstance(out, (tuple, list)):
        return ", ".join(summary(t) for t in out)
    return "%s %s sum=%.3f" % (str(out.dtype).replace("torch.", ""), list(out.shape), out.double().sum().item())


torch.manual_seed(0)
x = torch.randn(8, 32, dtype=torch.bfloat16)
# compiled first: an eager call before it would warm the library's caches and hide the break
got = torch.compile(fn, backend="inductor", fullgraph=True)(x)
want = fn(*[t.clone() for t in (x,)])
print("compiled:", summary(got))
print("eager:", summary(want))
try:
    torch.testing.assert_close(got, want)
except AssertionError as e:
    print(e)
    sys.exit(1)

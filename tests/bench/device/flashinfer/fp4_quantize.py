import torch
import flashinfer
from common import check


def step(x, gs):
    q, sf = flashinfer.fp4_quantize(x, gs)
    return q, sf


torch.manual_seed(0)
x = torch.randn(128, 4096, device="cuda", dtype=torch.bfloat16)
gs = (448 * 6) / x.float().abs().max().reshape(1)
check(step, x, gs)

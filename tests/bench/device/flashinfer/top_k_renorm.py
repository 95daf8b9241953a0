import torch
import flashinfer
from common import check


def step(p):
    return flashinfer.sampling.top_k_renorm_probs(p, 20) * 3


torch.manual_seed(0)
check(step, torch.softmax(torch.randn(16, 32000, device="cuda"), dim=-1))

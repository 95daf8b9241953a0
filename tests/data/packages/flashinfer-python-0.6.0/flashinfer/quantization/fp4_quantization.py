import functools
from typing import Optional, Tuple

from ..jit.cpp_ext import load_cuda_ops


@functools.cache
def get_fp4_quantization_module(backend: str = "100"):
    return load_cuda_ops(f"fp4_quantization_sm{backend}", ["fp4_quantization.cu"])


def fp4_quantize(
    input,
    global_scale=None,
    sf_vec_size: int = 16,
    sf_use_ue8m0: bool = False,
    is_sf_swizzled_layout: bool = True,
) -> Tuple[list, Optional[list]]:
    """Quantize input tensor to FP4 format."""
    module = get_fp4_quantization_module()
    scale = 1.0 if global_scale is None else global_scale
    return [round(x * scale) for x in input], module

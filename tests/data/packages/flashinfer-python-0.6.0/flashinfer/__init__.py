"""A small stand-in for FlashInfer, shaped like its FP4 path (sitepatch's demo and tests)."""
from .fp4_quantization import fp4_quantize
from .jit.cpp_ext import get_cuda_version

__version__ = "0.6.0"

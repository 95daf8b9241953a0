# Moved to flashinfer.quantization.fp4_quantization in 0.6.0; kept for old imports.
from .quantization import fp4_quantize, get_fp4_quantization_module

"""Building and loading JIT extensions."""
import os
import re
import subprocess

import torch
from packaging.version import Version


def get_cuda_path() -> str:
    return os.environ.get("CUDA_HOME", "/usr/local/cuda")


def get_cuda_version() -> Version:
    """The CUDA toolkit's version, as nvcc reports it."""
    nvcc = os.path.join(get_cuda_path(), "bin", "nvcc")
    txt = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    matches = re.findall(r"release (\d+\.\d+),", txt)
    if not matches:
        raise RuntimeError(f"Could not parse CUDA version from nvcc --version output: {txt}")
    return Version(matches[0])


def load_cuda_ops(name: str, sources: list) -> object:
    lock_path = os.path.join(os.path.expanduser("~/.cache/flashinfer"), f"{name}.lock")
    with open(lock_path, "a"):
        pass
    return {"name": name, "sources": sources, "cuda": str(get_cuda_version())}

#pragma once
// Small libraries, each a different shape of code dynamo cannot trace (torch 2.13, CPU),
// for explain --run's corpus test: what a GPU library does around its kernels (probes,
// config reads, caches, environment, timing, logging, dynamic imports, ctypes, objects
// where a constant is wanted). Each is called from a script that compiles it with
// fullgraph=True; `fixes` is what the search must prove: "kind function" in order.
#include <map>
#include <string>
#include <vector>

namespace corpus {

struct Shape {
  std::string name;                          // the package, and the test's name
  std::map<std::string, std::string> files;  // below site-packages
  std::string call;                          // the compiled lambda's body, of x
  std::vector<std::string> fixes;            // as explain --run describes them, in order
};

inline const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all = {
      {"smiprobe",
       {{"smiprobe/__init__.py", R"(import functools
import shutil
import subprocess


@functools.lru_cache(maxsize=None)
def sm_count():
    smi = shutil.which("nvidia-smi") or "/bin/echo"
    out = subprocess.run([smi, "132"], capture_output=True, text=True).stdout
    return int(out.split()[-1])


def launch(x):
    return x * (sm_count() // 66)
)"}},
       "smiprobe.launch(x)",
       {"assume_constant_result on smiprobe:sm_count"}},
      {"nvccversion",
       // The probe returns an object: the caller that turns it into a bool is the place.
       {{"nvccversion/__init__.py", R"(import os
import subprocess


class Version:
    def __init__(self, text):
        self.parts = tuple(int(p) for p in text.split("."))

    def __ge__(self, other):
        return self.parts >= other.parts


def get_cuda_version() -> Version:
    nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    if not os.path.exists(nvcc):
        return Version("12.8")
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return Version(out.rsplit("release ", 1)[1].split(",")[0])


def is_cuda_version_at_least(v):
    return get_cuda_version() >= Version(v)


def fp4_quantize(x):
    if not is_cuda_version_at_least("12.8"):
        raise RuntimeError("needs CUDA 12.8")
    return (x * 4).round() / 4
)"}},
       "nvccversion.fp4_quantize(x)",
       {"assume_constant_result on nvccversion:is_cuda_version_at_least"}},
      {"ldcache",
       {{"ldcache/__init__.py", R"(import subprocess


def has_libcuda():
    try:
        out = subprocess.check_output(["/sbin/ldconfig", "-p"], text=True)
    except OSError:
        return False
    return "libcuda.so" in out


def pick(x):
    if has_libcuda():
        return x * 2
    return x + 1
)"}},
       "ldcache.pick(x)",
       {"assume_constant_result on ldcache:has_libcuda"}},
      {"scalefile",
       // Two probes on one path: the second is reached once the first is answered; its
       // argument is its default at its only call.
       {{"scalefile/__init__.py", R"(import functools
import json
import os
import shutil
import subprocess

_DIR = os.path.dirname(__file__)


@functools.lru_cache(maxsize=None)
def _capability():
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "9.0"
    return subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                          text=True).stdout.strip()


def load_scales(name="default"):
    path = os.path.join(_DIR, name + ".json")
    if not os.path.exists(path):
        return {"k": 1.0, "v": 1.0}
    with open(path) as f:
        return json.load(f)


def quantize_kv(x):
    if float(_capability()) < 8.0:
        raise RuntimeError("needs sm80")
    s = load_scales()
    return x * s["k"] + s["v"]
)"},
        {"scalefile/default.json", "{\"k\": 0.5, \"v\": 2.0}\n"}},
       "scalefile.quantize_kv(x)",
       {"assume_constant_result on scalefile:_capability", "assume_constant_result on scalefile:load_scales"}},
      {"cfgcache",
       {{"cfgcache/__init__.py", R"(import functools
import os

_HERE = os.path.dirname(__file__)


@functools.cache
def config_dir():
    for cand in ("tuned", "default"):
        if os.path.isdir(os.path.join(_HERE, cand)):
            return cand
    return "none"


def block(x):
    return x * (2 if config_dir() == "default" else 3)
)"},
        {"cfgcache/default/README", "tuned configs go here\n"}},
       "cfgcache.block(x)",
       {"assume_constant_result on cfgcache:config_dir"}},
      {"envread",
       {{"envread/__init__.py", R"(import os


def threads():
    return int(os.environ.get("ENVREAD_THREADS") or os.cpu_count())


def scaled(x):
    return x * min(threads(), 2)
)"}},
       "envread.scaled(x)",
       {"assume_constant_result on envread:threads"}},
      {"dynimport",
       {{"dynimport/__init__.py", R"(import importlib


def backend_name(kind="cpu"):
    mod = importlib.import_module("dynimport._" + kind)
    return mod.NAME


def run(x):
    return x * len(backend_name())
)"},
        {"dynimport/_cpu.py", "NAME = \"cpu\"\n"}},
       "dynimport.run(x)",
       {"assume_constant_result on dynimport:backend_name"}},
      {"ctypesload",
       {{"ctypesload/__init__.py", R"(import ctypes
import ctypes.util


def libc_ok():
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    ctypes.CDLL(name)
    return True


def op(x):
    return x + (1 if libc_ok() else 0)
)"}},
       "ctypesload.op(x)",
       {"assume_constant_result on ctypesload:libc_ok"}},
      {"handleobj",
       // A getter of an object: its attribute, read by the caller, is the constant.
       {{"handleobj/__init__.py", R"(import os


class Handle:
    def __init__(self, path):
        self.path = path
        self.ok = os.path.exists(path)


def open_handle(path="/dev/null"):
    return Handle(path)


def handle_ok():
    return open_handle().ok


def use(x):
    return x * 2 if handle_ok() else x
)"}},
       "handleobj.use(x)",
       {"assume_constant_result on handleobj:handle_ok"}},
      {"timing",
       // Only the custom-op route: a function of tensors that times itself.
       {{"timing/__init__.py", R"(import time


def timed(x):
    t0 = time.perf_counter()
    y = x * 2
    timed.last = time.perf_counter() - t0
    return y
)"}},
       "timing.timed(x)",
       {"register-custom-op on timing:timed"}},
      {"logwarn",
       {{"logwarn/__init__.py", R"(import logging
import warnings

log = logging.getLogger(__name__)


def check_dtype(x):
    if x.dtype != x.dtype:
        warnings.warn("odd")
    log.warning("checked %s", "x")
    return x + 1
)"}},
       "logwarn.check_dtype(x)",
       {"register-custom-op on logwarn:check_dtype"}},
      {"jitloader",
       // A loader behind a lock returns a module object: the kernel wrapper around it,
       // returning two tensors, is the custom op; its fake shapes each like an input.
       {{"jitloader/__init__.py", R"(import functools
import os
import tempfile
import threading

_LOCK = threading.Lock()


class Kernel:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, k, v):
        return k * self.scale, v * self.scale


@functools.cache
def load_kernel(name):
    with _LOCK:
        path = os.path.join(tempfile.gettempdir(), "jitloader-%s.so" % name)
        return Kernel(2.0 if not os.path.exists(path) else 1.0)


def quantize_kv(k, v):
    return load_kernel("kv")(k, v)
)"}},
       "sum(jitloader.quantize_kv(x, x + 1))",
       {"register-custom-op on jitloader:quantize_kv"}},
      {"methodonly",
       // No fix: the probe is a method called with a tensor, under fullgraph=True; the
       // tool must say so and why, frame by frame.
       {{"methodonly/__init__.py", R"(import time


class Runner:
    def forward(self, x):
        self.started = time.perf_counter()
        return x * 2


RUNNER = Runner()
)"}},
       "methodonly.RUNNER.forward(x)",
       {}},
  };
  return all;
}

}  // namespace corpus

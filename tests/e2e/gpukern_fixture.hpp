#pragma once
// A small library shaped like a GPU kernel library, for the tests of explain --run and
// try against real dynamo (torch 2.13 CPU): a version probe through subprocess (after
// shutil.which; annotated, so the shipped hint's traceable body fits it), a capability
// probe, a config file read (lru_cache), and a JIT loader with a file lock behind a
// cached module getter. Two user scripts compile it, with
// fullgraph=True (--fullgraph) or without; backend="eager" keeps each run to seconds.
#include <string>

#include "e2e_support.hpp"
#include "support/torch_env.hpp"

namespace gpukern {

inline const char* kEnv = R"(import functools
import json
import os
import shutil
import subprocess

_TUNING = os.path.join(os.path.dirname(__file__), "tuning.json")


def cuda_version() -> str:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return "12.8"
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return out.rsplit("release ", 1)[1].split(",")[0]


def device_capability():
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return (10, 0)
    out = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True, text=True)
    major, minor = out.stdout.strip().split(".")
    return (int(major), int(minor))


@functools.lru_cache(maxsize=None)
def tuning():
    with open(_TUNING) as f:
        return json.load(f)
)";

inline const char* kJit = R"(import functools
import os
import tempfile

from filelock import FileLock

from . import env


class Module:
    def __init__(self, block):
        self.block = block

    def run(self, x):
        return x * self.block


def _build(name):
    with FileLock(os.path.join(tempfile.gettempdir(), "gpukern-%s.lock" % name)):
        return Module(env.tuning()["block"])


@functools.cache
def get_module(name):
    return _build(name)
)";

inline const char* kOps = R"(from . import env, jit


def scale(x):
    major, minor = env.device_capability()
    if env.cuda_version() < "12":
        raise RuntimeError("gpukern needs CUDA 12 or newer")
    return x * (env.tuning()["block"] + major + minor)


def quantize(x):
    return jit.get_module("fp4").run(scale(x))
)";

inline const char* kInit = R"(from .ops import quantize, scale
)";

// The probes only: every break can be fixed.
inline const char* kProbeScript = R"(import sys

import torch

import gpukern

f = torch.compile(lambda x: gpukern.scale(x) + 1, backend="eager", fullgraph="--fullgraph" in sys.argv)
print(f(torch.ones(4)).tolist())
)";

// Through the JIT loader too: its file lock is left.
inline const char* kReproScript = R"(import sys

import torch

import gpukern

f = torch.compile(lambda x: gpukern.quantize(x) + 1, backend="eager", fullgraph="--fullgraph" in sys.argv)
print(f(torch.ones(4)).tolist())
)";

// The user's own function compiled: explain --run walks from it after the fixes.
inline const char* kModelScript = R"(import sys

import torch

import gpukern


def forward(x):
    return gpukern.scale(x) + 1


f = torch.compile(forward, backend="eager", fullgraph="--fullgraph" in sys.argv)
print(f(torch.ones(4)).tolist())
)";

struct Env {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string app;  // the user's folder: the scripts, apart from site-packages
  Env() : venv(testsupport::torch_venv(tmp.path + "/venv")), app(tmp.path + "/app") {
    std::string pkg = venv.site_packages + "/gpukern/";
    testsupport::spit(pkg + "__init__.py", kInit);
    testsupport::spit(pkg + "env.py", kEnv);
    testsupport::spit(pkg + "jit.py", kJit);
    testsupport::spit(pkg + "ops.py", kOps);
    testsupport::spit(pkg + "tuning.json", "{\"block\": 4}\n");
    testsupport::spit(app + "/probe.py", kProbeScript);
    testsupport::spit(app + "/repro.py", kReproScript);
    testsupport::spit(app + "/model.py", kModelScript);
  }
  // sitepatch run in the user's folder (the scripts' imports find the installed gpukern).
  sitepatch::util::RunResult sp(std::vector<std::string> args) const { return e2e::sp_in(app, venv.root, std::move(args)); }
};

}  // namespace gpukern

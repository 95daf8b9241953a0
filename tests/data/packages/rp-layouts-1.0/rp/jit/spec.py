# Classes reached through what the walk can infer of a value: a return annotation,
# a constructor call, a property, an attribute set in __init__, a module-level instance.
import os
import subprocess
from pathlib import Path
from typing import Optional


class JitSpec:
    def build_and_load(self):
        return subprocess.run(["ninja"])

    @property
    def aot_path(self) -> Path:
        return Path("/tmp/aot")

    def is_built(self):
        return self.aot_path.exists()


class Registry:
    def register(self, name):
        return open(name)


registry = Registry()


class BuildLock:
    def __enter__(self):
        return os.makedirs("/tmp/lock")

    def __exit__(self, *exc):
        return False


def gen_fp4() -> JitSpec:
    return JitSpec()


def gen_fp8() -> Optional[JitSpec]:
    return JitSpec()


def gen_any() -> "JitSpec | None":
    return JitSpec()


class Holder:
    def __init__(self):
        self.spec = JitSpec()

    def run(self):
        return self.spec.build_and_load()


backend_modules = {
    # every builder is annotated -> JitSpec
    "fp4": gen_fp4,
    "fp8": gen_fp8,
}


class AotSpec:
    def build_and_load(self):
        return open("/tmp/aot.so")


def gen_aot() -> AotSpec:
    return AotSpec()


mixed_modules = [gen_fp4, gen_aot]

# Values reached through parameter defaults and chains of attributes: each function
# reaches its flagged operation only through what the code says an attribute holds.
from pathlib import Path

from .jit.spec import AotSpec, JitSpec


def default_annotated(root: Path = Path("kernels")):
    return root.exists()


def default_call(root=Path.home()):
    return root.mkdir()


class Cache:
    def __init__(self):
        self.spec = JitSpec()


class Annotated:
    spec: JitSpec


class WithProperty:
    @property
    def cache(self) -> Cache:
        return Cache()


class Given:
    def __init__(self, spec: JitSpec):
        self.spec = spec


class Base:
    def __init__(self):
        self.cache = Cache()


class Derived(Base):
    pass


class Owner:
    def __init__(self):
        self.cache = Cache()
        self.annotated = Annotated()
        self.given = Given(JitSpec())
        self.derived = Derived()

    def via_init_chain(self):
        return self.cache.spec.build_and_load()

    def via_class_annotation(self):
        return self.annotated.spec.build_and_load()

    def via_parameter_attribute(self):
        return self.given.spec.build_and_load()

    def via_base_init(self):
        return self.derived.cache.spec.build_and_load()

    def unknown_attribute(self):
        return self.cache.missing.build_and_load()


def via_object_attribute():
    owner = Owner()
    return owner.cache.spec.build_and_load()


def via_property_chain(holder: WithProperty):
    return holder.cache.spec.build_and_load()


def via_path_home():
    home = Path.home()
    return home.exists()


shared = Owner()


def via_module_instance_chain():
    return shared.cache.spec.build_and_load()


def via_resolved_path(root):
    path = Path(root).resolve()
    return path.exists()


def via_path_parent(root):
    return Path(root).parent.mkdir()


def via_method_chain(root):
    return Path(root).resolve().with_suffix(".so").exists()


class Paths:
    def __init__(self):
        self.root = Path("/tmp/kernels")


class Layout:
    paths: Paths

    def cache_dir(self):
        return self.paths.root.parent.mkdir()


class Either:
    def __init__(self, fast):
        if fast:
            self.spec = JitSpec()
        else:
            self.spec = AotSpec()

    def build(self):
        return self.spec.build_and_load()


def via_literals(kernel):
    flags = []
    flags.append("-O2")
    name = f"kernel_{kernel}"
    table = {}
    return name.upper(), table.get(name), flags


def literal_then_call(make):
    out = []
    out = make()
    return out.build_and_load()


def via_stdlib_results(name):
    import os
    import re
    import urllib.request

    cwd = os.getcwd()
    found = re.search("x", name)
    page = urllib.request.urlopen(name)
    return cwd.strip(), found.group(0), page.read()

# Each function reaches its flagged operation through one inferred type.
from pathlib import Path

from .jit.spec import BuildLock, Holder, JitSpec, backend_modules, gen_any, gen_fp4, gen_fp8, registry


def via_return_annotation():
    return gen_fp4().build_and_load()


def via_constructor():
    spec = JitSpec()
    return spec.build_and_load()


def via_optional():
    spec = gen_fp8()
    return spec.build_and_load()


def via_union_string():
    spec = gen_any()
    return spec.build_and_load()


def via_parameter(spec: JitSpec):
    return spec.build_and_load()


def via_property():
    return JitSpec().is_built()


def via_module_instance():
    return registry.register("kernels")


def via_with():
    with BuildLock():
        pass


def via_self_attribute():
    return Holder().run()


def via_dict_of_builders(backend):
    return backend_modules[backend]().build_and_load()


def via_dict_item(backend):
    return backend_modules[backend]()


def via_path_arithmetic(root):
    return (Path(root) / "kernels" / "fp4.so").exists()


def via_path_variable(root):
    cache = Path(root) / "cache"
    return cache.mkdir()


def via_mixed_builders(i):
    from .jit.spec import mixed_modules

    return mixed_modules[i]().build_and_load()

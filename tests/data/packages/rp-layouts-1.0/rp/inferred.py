# Each function reaches its flagged operation through one inferred type.
from .jit.spec import BuildLock, Holder, JitSpec, gen_any, gen_fp4, gen_fp8, registry


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

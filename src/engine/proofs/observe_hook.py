# explain --run's observed fakes: before a custom op is written for a library function,
# what the real function does on the repro's inputs is seen, not guessed. Imported by
# try_hook.py when SITEPATCH_OBSERVE names functions ("pkg.mod:fn,pkg:other").
#
# Each named function is wrapped where its module binds it (once the module is imported),
# and where torch.library.custom_op is given it (a candidate run makes it an op). A call
# records each input's and output's dtype, shape and device, which inputs it changed
# (their version counters) and which outputs share an input's storage; then the function
# runs once more on inputs of other sizes (the first dimension doubled, then the last)
# so that the output shapes can be written as expressions of the input shapes. One line
# per function at exit. Python 3.6 and later.
import os
import sys

_MARK = "sitepatch-observe: "
_CALLS = 2
_seen = {}  # "module:qualname" -> [call, ...]
_busy = [False]


def _meta(torch, v):
    if isinstance(v, torch.Tensor):
        return {"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape), "device": v.device.type}
    if isinstance(v, (bool, int, float)) or v is None:
        return {"value": v}
    if isinstance(v, str):
        return {"value": v[:80]}
    return {"type": type(v).__name__}


def _resized(torch, args, kwargs, dim):
    # The inputs with dimension `dim` of each tensor doubled (fresh values, same dtype).
    def grow(v):
        if not isinstance(v, torch.Tensor) or v.ndim == 0:
            return v
        shape = list(v.shape)
        shape[dim] *= 2
        if v.dtype.is_floating_point:
            return torch.randn(shape, device=v.device).to(v.dtype)
        return torch.zeros(shape, dtype=v.dtype, device=v.device)
    return [grow(a) for a in args], {k: grow(v) for k, v in kwargs.items()}


def _one(torch, fn, names, args, kwargs):
    versions = {}
    bound = list(zip(names, args)) + list(kwargs.items())
    for name, v in bound:
        if isinstance(v, torch.Tensor):
            versions[name] = v._version
    out = fn(*args, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    inputs = {name: _meta(torch, v) for name, v in bound}
    mutated = [name for name, v in bound if isinstance(v, torch.Tensor) and v._version != versions[name]]
    aliased = []
    for i, o in enumerate(outs):
        if isinstance(o, torch.Tensor):
            for name, v in bound:
                if isinstance(v, torch.Tensor) and v.numel() and o.numel() and \
                        o.untyped_storage().data_ptr() == v.untyped_storage().data_ptr():
                    aliased.append("%d:%s" % (i, name))
    call = {"inputs": inputs, "outputs": [_meta(torch, o) for o in outs],
            "tuple": isinstance(out, (tuple, list)), "mutated": mutated, "aliased": aliased}
    return out, call


def _observer(torch, key, fn):
    import functools
    import inspect
    try:
        names = [p for p in inspect.signature(fn).parameters]
    except (TypeError, ValueError):
        names = []

    compiler = getattr(torch, "compiler", None)
    compiling = getattr(compiler, "is_compiling", None) or getattr(torch._dynamo, "is_compiling", lambda: False)

    @functools.wraps(fn)
    def observed(*args, **kwargs):
        # Under dynamo's trace the wrapper must be nothing: dynamo takes is_compiling() as
        # True and traces only the call, never the version counters and storages below.
        if compiling():
            return fn(*args, **kwargs)
        calls = _seen.setdefault(key, [])
        if _busy[0] or len(calls) >= _CALLS:
            return fn(*args, **kwargs)
        _busy[0] = True
        try:
            out, call = _one(torch, fn, names, args, kwargs)
            calls.append(call)
            if len(calls) == 1:
                for dim in (0, -1):
                    try:
                        a, k = _resized(torch, args, kwargs, dim)
                        call.setdefault("resized", []).append(_one(torch, fn, names, a, k)[1])
                    except Exception as e:  # a kernel that takes only some sizes: static shapes
                        call.setdefault("resize_failed", []).append("%s: %s" % (type(e).__name__, str(e)[:120]))
        finally:
            _busy[0] = False
        return out

    return observed


def _at_exit():
    import json
    for key, calls in sorted(_seen.items()):
        sys.stderr.write("\n" + _MARK + json.dumps({"function": key, "calls": calls}) + "\n")
    sys.stderr.flush()


def install():
    wanted = [w for w in os.environ.get("SITEPATCH_OBSERVE", "").split(",") if ":" in w]
    if not wanted:
        return
    import atexit
    import json  # noqa: F401  now, not at exit: by then the command's folder is on sys.path
    import sitepatch_diff
    keys = set(wanted)

    def wrap_custom_op(torch):
        library = getattr(torch, "library", None)
        real = getattr(library, "custom_op", None)
        if real is None:
            return

        def custom_op(name, fn=None, *args, **kwargs):
            # A candidate run makes the function an op: the op's body is what is observed.
            def take(f):
                key = "%s:%s" % (getattr(f, "__module__", ""), getattr(f, "__qualname__", ""))
                return real(name, _observer(torch, key, f) if key in keys else f, *args, **kwargs)
            return take if fn is None else take(fn)

        library.custom_op = custom_op

    def wrap_module(key):
        module_name, qualname = key.split(":", 1)
        if "." in qualname:
            return

        def wrap(module):
            fn = getattr(module, qualname, None)
            if callable(fn) and type(fn).__name__ == "function":
                import torch
                setattr(module, qualname, _observer(torch, key, fn))

        sitepatch_diff._after_import(module_name, wrap)

    sitepatch_diff._after_import("torch", wrap_custom_op)
    for key in sorted(keys):
        wrap_module(key)
    atexit.register(_at_exit)


def wanted():
    return bool(os.environ.get("SITEPATCH_OBSERVE"))

# explain --run's observed fakes: before a custom op is written for a library function,
# what the real function does on the repro's inputs is seen, not guessed. Imported by
# try_hook.py when SITEPATCH_OBSERVE names functions ("pkg.mod:fn,pkg:other").
#
# Nothing is wrapped: while the differential proof (diff_hook.py) runs the program's
# compiled function eagerly, a profile function sees each call of a named function by its
# frame, and records each input's and output's dtype, shape and device, which inputs it
# changed (their version counters) and which outputs share an input's storage; then the
# function runs once more on inputs of other sizes (the first dimension doubled, then the
# last) so that the output shapes can be written as expressions of the input shapes. A
# wrapper would have been traced by dynamo, and changed what the run measures. One line
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


class _Profiler(object):
    # Sees each call of a watched function by its frame (sys.setprofile), only while the
    # differential proof runs the program's function eagerly: nothing is wrapped, so what
    # dynamo traces (and counts) is the program's own code.
    def __init__(self, torch, targets):
        self.torch, self.targets, self.pending = torch, targets, {}

    def __call__(self, frame, event, arg):
        if _busy[0] or event not in ("call", "return"):
            return
        key = "%s:%s" % (frame.f_globals.get("__name__", ""), frame.f_code.co_name)
        if key not in self.targets:
            return
        torch = self.torch
        if event == "call":
            if len(_seen.get(key, [])) >= _CALLS:
                return
            code = frame.f_code
            names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            bound = [(n, frame.f_locals.get(n)) for n in names]
            self.pending[id(frame)] = (bound, {n: v._version for n, v in bound if isinstance(v, torch.Tensor)})
            return
        started = self.pending.pop(id(frame), None)
        if started is None:
            return
        bound, versions = started
        _busy[0] = True
        try:
            call = _describe(torch, bound, versions, arg)
            calls = _seen.setdefault(key, [])
            calls.append(call)
            if len(calls) == 1:
                fn = frame.f_globals.get(frame.f_code.co_name)
                for dim in (0, -1):
                    try:
                        args, kwargs = _resized(torch, [v for _, v in bound], {}, dim)
                        before = {n: v._version for n, v in zip([n for n, _ in bound], args)
                                  if isinstance(v, torch.Tensor)}
                        out = fn(*args, **kwargs)
                        call.setdefault("resized", []).append(
                            _describe(torch, list(zip([n for n, _ in bound], args)), before, out))
                    except Exception as e:  # a kernel that takes only some sizes: static shapes
                        call.setdefault("resize_failed", []).append("%s: %s" % (type(e).__name__, str(e)[:120]))
        except Exception as e:
            _seen.setdefault(key, []).append({"error": "%s: %s" % (type(e).__name__, str(e)[:120])})
        finally:
            _busy[0] = False


def _describe(torch, bound, versions, out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    mutated = [n for n, v in bound if isinstance(v, torch.Tensor) and n in versions and v._version != versions[n]]
    aliased = []
    for i, o in enumerate(outs):
        if isinstance(o, torch.Tensor):
            for n, v in bound:
                if isinstance(v, torch.Tensor) and v.numel() and o.numel() and \
                        o.untyped_storage().data_ptr() == v.untyped_storage().data_ptr():
                    aliased.append("%d:%s" % (i, n))
    return {"inputs": {n: _meta(torch, v) for n, v in bound}, "outputs": [_meta(torch, o) for o in outs],
            "tuple": isinstance(out, (tuple, list)), "mutated": mutated, "aliased": aliased}


class observing(object):
    """While the differential proof runs the program's function eagerly: the watched
    functions' calls are recorded."""

    def __enter__(self):
        torch = sys.modules.get("torch")
        self._before = sys.getprofile()
        if _targets and torch is not None:
            sys.setprofile(_Profiler(torch, _targets))
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._before)
        return False


def _at_exit():
    import json
    for key, calls in sorted(_seen.items()):
        sys.stderr.write("\n" + _MARK + json.dumps({"function": key, "calls": calls}) + "\n")
    sys.stderr.flush()


_targets = set()


def install():
    wanted = [w for w in os.environ.get("SITEPATCH_OBSERVE", "").split(",") if ":" in w and "." not in w.split(":", 1)[1]]
    if not wanted:
        return
    import atexit
    import json  # noqa: F401  now, not at exit: by then the command's folder is on sys.path
    _targets.update(wanted)
    atexit.register(_at_exit)

# explain --run's differential proof: a fix counts only when the compiled code computes
# what the unpatched program computes. Imported by try_hook.py (the run's sitecustomize)
# when SITEPATCH_DIFF names a folder this explain session owns.
#
# Every run is seeded the same way (random, numpy, torch). Each callable torch.compile
# returns is wrapped: a call runs the compiled code first (what dynamo sees stays what
# the program would show it: an eager call first would fill caches the break lives in),
# then the function as loaded in this process, eagerly, on clones of the inputs with the
# RNG state and module buffers it started from, then puts back the state the compiled
# call left. SITEPATCH_DIFF_MODE=record (the run with no fix) saves those eager outputs,
# one file per call; =compare (a run with fixes) compares the compiled outputs with the
# record (the unpatched program) and with the patched code run eagerly here (a fake that
# lies shows even where the record has no such call). One line at exit says what was
# checked. Python 3.6 and later; nothing of torch is imported before the program does.
import os
import sys

_MARK = "sitepatch-diff: "
_CALLS_PER_FUNCTION = 4
_FUNCTIONS = 16
_RECORD_BYTES = 64 << 20


class _Report(object):
    def __init__(self):
        self.calls = 0            # calls of compiled functions on which outputs were compared
        self.vs_record = 0        # of those, compared with the unpatched program's record
        self.vs_eager = 0         # of those, compared with the patched code run eagerly here
        self.recorded = 0
        self.mismatch = None      # the first difference found, in words
        self.notes = []

    def line(self):
        import json
        return _MARK + json.dumps({"calls": self.calls, "vs_record": self.vs_record, "vs_eager": self.vs_eager,
                                   "recorded": self.recorded, "mismatch": self.mismatch,
                                   "notes": self.notes[:4], "pid": os.getpid()})


_report = _Report()


def _after_import(name, callback):
    # Runs callback(module) once `name` is imported (now, when it already is).
    if name in sys.modules:
        callback(sys.modules[name])
        return

    class Loader(object):
        def __init__(self, inner):
            self._inner = inner

        def create_module(self, spec):
            create = getattr(self._inner, "create_module", None)
            return create(spec) if create else None

        def exec_module(self, module):
            self._inner.exec_module(module)
            # The module keeps its own loader, as importlib would have set it.
            module.__loader__ = self._inner
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self._inner
            callback(module)

        def __getattr__(self, attr):
            return getattr(self._inner, attr)

    class Finder(object):
        busy = False  # asking the other finders, another Finder for the same name among them

        def find_spec(self, fullname, path=None, target=None):
            if fullname != name or self.busy:
                return None
            self.busy = True
            try:
                for finder in list(sys.meta_path):
                    if finder is self or not hasattr(finder, "find_spec"):
                        continue
                    spec = finder.find_spec(fullname, path, target)
                    if spec is not None:
                        if self in sys.meta_path:
                            sys.meta_path.remove(self)
                        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                            spec.loader = Loader(spec.loader)
                        return spec
                return None
            finally:
                self.busy = False

    sys.meta_path.insert(0, Finder())


def _seed():
    import random
    random.seed(0)
    _after_import("numpy", lambda np: np.random.seed(0))


def _torch_imported(torch):
    torch.manual_seed(0)
    _wrap_compile(torch)


# Outputs as (path, leaf) pairs: tensors, numbers, strings, None, in a fixed order.
def _leaves(torch, value, path="output"):
    if isinstance(value, torch.Tensor):
        return [(path, value)]
    if isinstance(value, (list, tuple)):
        out = [(path, "%s of %d" % (type(value).__name__, len(value)))]
        for i, v in enumerate(value):
            out.extend(_leaves(torch, v, "%s[%d]" % (path, i)))
        return out
    if isinstance(value, dict):
        out = [(path, "dict of %s" % sorted(map(str, value)))]
        for k in sorted(value, key=str):
            out.extend(_leaves(torch, value[k], "%s[%r]" % (path, k)))
        return out
    if value is None or isinstance(value, (bool, int, float, str)):
        return [(path, value)]
    return [(path, "a %s" % type(value).__name__)]


def _difference(torch, got, want):
    # The first way `got` (compiled) differs from `want` (eager), in words; None if none.
    a, b = _leaves(torch, got), _leaves(torch, want)
    if [p for p, _ in a] != [p for p, _ in b]:
        return "the outputs differ in structure: %s where eager gives %s" % (
            ", ".join(p for p, _ in a[:4]), ", ".join(p for p, _ in b[:4]))
    for (path, x), (_, y) in zip(a, b):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return "%s is %s where eager gives %s" % (path, _kind(torch, x), _kind(torch, y))
        if not isinstance(x, torch.Tensor):
            if isinstance(x, float) and isinstance(y, float):
                if abs(x - y) <= 1e-5 + 1e-5 * abs(y):
                    continue
            if x != y:
                return "%s is %r where eager gives %r" % (path, x, y)
            continue
        for what in ("dtype", "shape", "device"):
            if getattr(x, what) != getattr(y, what):
                return "%s has %s %s where eager gives %s" % (path, what, _show(getattr(x, what)),
                                                              _show(getattr(y, what)))
        try:
            torch.testing.assert_close(x, y, equal_nan=True)
        except AssertionError:
            return "%s: %s" % (path, _how_far(torch, x, y))
    return None


def _show(v):
    return "(%s)" % ", ".join(map(str, v)) if isinstance(v, tuple) or type(v).__name__ == "Size" else str(v)


def _kind(torch, v):
    return "a %s tensor" % v.dtype if isinstance(v, torch.Tensor) else repr(v)


def _how_far(torch, x, y):
    xd, yd = x.detach().double().cpu(), y.detach().double().cpu()
    diff = (xd - yd).abs()
    finite = torch.isfinite(diff)
    worst = float(diff[finite].max()) if bool(finite.any()) else float("nan")
    return ("max abs difference %.6g (sum %.6g where eager gives %.6g, %d of %d elements differ, dtype %s)"
            % (worst, float(xd.sum()), float(yd.sum()), int((~torch.isclose(xd, yd, equal_nan=True)).sum()),
               xd.numel(), x.dtype))


def _clone(torch, value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list):
        return [_clone(torch, v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_clone(torch, v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(torch, v) for k, v in value.items()}
    return value


def _plain(torch, value):
    # What a record keeps: tensors, numbers, strings, None, in lists, tuples and dicts
    # (torch.load(weights_only=True) reads it back); any other object as its kind.
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        items = [_plain(torch, v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {str(k): _plain(torch, v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return "a %s" % type(value).__name__


def _has_tensor(torch, value):
    return any(isinstance(leaf, torch.Tensor) for _, leaf in _leaves(torch, value))


class _State(object):
    # What a call may change besides its outputs: RNG streams and a module's buffers.
    def __init__(self, torch, module):
        import random
        self.py = random.getstate()
        self.cpu = torch.get_rng_state()
        self.cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
        np = sys.modules.get("numpy")
        self.np = np.random.get_state() if np is not None else None
        self.buffers = [(b, b.detach().clone()) for b in module.buffers()] if module is not None else []

    def restore(self, torch):
        import random
        random.setstate(self.py)
        torch.set_rng_state(self.cpu)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)
        np = sys.modules.get("numpy")
        if self.np is not None and np is not None:
            np.random.set_state(self.np)
        with torch.no_grad():
            for b, saved in self.buffers:
                b.copy_(saved)


class _Checked(object):
    # One compiled callable: its calls compared, the first few of them.
    def __init__(self, torch, index, original, module):
        self.torch, self.index, self.original, self.module = torch, index, original, module
        self.calls = 0

    def run(self, compiled_call, args, kwargs):
        torch = self.torch
        k = self.calls
        self.calls += 1
        if k >= _CALLS_PER_FUNCTION or not _has_tensor(torch, (args, kwargs)):
            return compiled_call(*args, **kwargs)
        inputs = _clone(torch, (args, kwargs))
        before = _State(torch, self.module)
        try:
            out = compiled_call(*args, **kwargs)
        except BaseException:
            # The first run records; a run that observes functions for their fakes runs
            # the path eagerly too, so that they are called.
            if _MODE == "record" or os.environ.get("SITEPATCH_OBSERVE"):
                try:
                    before.restore(torch)
                    self.eager(inputs, before, k, None)
                except Exception as e:
                    _report.notes.append("call %d of compiled function %d was not recorded: %s"
                                         % (k + 1, self.index, type(e).__name__))
            raise
        try:
            after = _State(torch, self.module)
            before.restore(torch)
            try:
                self.eager(inputs, before, k, out)
            finally:
                after.restore(torch)
        except Exception as e:  # the check's own failure is said, never the program's
            _report.notes.append("call %d of compiled function %d could not be checked: %s: %s"
                                 % (k + 1, self.index, type(e).__name__, e))
        return out

    def eager(self, inputs, before, k, compiled_out):
        torch = self.torch
        args, kwargs = inputs
        observe = sys.modules.get("sitepatch_observe")
        try:
            with _eager_stance(torch), (observe.observing() if observe else _Nothing()):
                want = self.original(*args, **kwargs)
        except Exception as e:
            _report.notes.append("the eager call %d of compiled function %d raised %s" % (k, self.index, type(e).__name__))
            return
        path = os.path.join(_DIR, "call-%d-%d.pt" % (self.index, k))
        if _MODE == "record":
            _save(torch, path, want)
            return
        if compiled_out is None:
            return
        _report.calls += 1
        diff = _difference(torch, compiled_out, want)
        _report.vs_eager += 1
        if diff is not None and _report.mismatch is None:
            _report.mismatch = "call %d: compiled %s (against this run's eager code)" % (k + 1, diff)
        if os.path.exists(path):
            try:
                recorded = torch.load(path, weights_only=True)
            except TypeError:  # a torch before weights_only
                recorded = torch.load(path)
            _report.vs_record += 1
            diff = _difference(torch, _plain(torch, compiled_out), recorded)
            if diff is not None and _report.mismatch is None:
                _report.mismatch = "call %d: compiled %s (against the unpatched program)" % (k + 1, diff)


def _save(torch, path, value):
    size = sum(leaf.numel() * leaf.element_size() for _, leaf in _leaves(torch, value)
               if isinstance(leaf, torch.Tensor))
    if size > _RECORD_BYTES:
        _report.notes.append("an eager output of %d MB was not recorded" % (size >> 20))
        return
    tmp = path + ".tmp"
    torch.save(_plain(torch, value), tmp)
    os.rename(tmp, path)
    _report.recorded += 1


class _Nothing(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _eager_stance(object):
    # The original runs eagerly even where it calls compiled code of its own.
    def __init__(self, torch):
        stance = getattr(getattr(torch, "compiler", None), "set_stance", None)
        self._cm = stance("force_eager") if stance is not None else None

    def __enter__(self):
        if self._cm is not None:
            self._cm.__enter__()

    def __exit__(self, *exc):
        if self._cm is not None:
            return self._cm.__exit__(*exc)
        return False


def _wrap(torch, original, compiled, index):
    import functools
    module = original if isinstance(original, torch.nn.Module) else None
    checked = _Checked(torch, index, original, module)
    if module is not None:
        # A compiled module stays the object torch made (its parameters, state_dict):
        # only its class's __call__ is checked.
        cls = type(compiled)
        call = cls.__call__

        def __call__(self, *args, **kwargs):
            return checked.run(lambda *a, **k: call(self, *a, **k), args, kwargs)

        compiled.__class__ = type(cls.__name__, (cls,), {"__call__": __call__, "__module__": cls.__module__})
        return compiled

    @functools.wraps(compiled)
    def run(*args, **kwargs):
        return checked.run(compiled, args, kwargs)

    return run


def _wrap_compile(torch):
    real = torch.compile
    made = [0]

    def compile(model=None, **kwargs):
        if model is None:
            return lambda m: compile(m, **kwargs)
        _dynamo_config()
        if kwargs.get("backend", "inductor") == "inductor":
            # Inductor's own RNG draws other numbers than eager's: compared calls would
            # differ wherever the model draws random numbers (dropout).
            import importlib
            importlib.import_module("torch._inductor.config").fallback_random = True
        compiled = real(model, **kwargs)
        made[0] += 1
        if made[0] > _FUNCTIONS or not callable(compiled):
            return compiled
        return _wrap(torch, model, compiled, made[0] - 1)

    compile.__wrapped__ = real
    compile.__doc__ = real.__doc__
    torch.compile = compile


_configured = [False]


def _dynamo_config():
    # explain --run's config knobs (SITEPATCH_DYNAMO_CONFIG, a line each): what the user
    # would write in their own code before torch.compile; run once, before the first.
    lines = os.environ.get("SITEPATCH_DYNAMO_CONFIG", "")
    if _configured[0] or not lines:
        return
    _configured[0] = True
    import importlib
    scope = {"torch": sys.modules["torch"]}
    importlib.import_module("torch._dynamo")
    for line in lines.split("\n"):
        exec(compile_source(line), scope)


def compile_source(line):
    return compile(line, "<sitepatch explain --run: dynamo config>", "exec")


def _at_exit():
    sys.stderr.write("\n" + _report.line() + "\n")
    sys.stderr.flush()


_DIR = os.environ.get("SITEPATCH_DIFF", "")
_MODE = os.environ.get("SITEPATCH_DIFF_MODE", "compare")


def install():
    if not _DIR:
        return
    import atexit
    import json  # noqa: F401  now, not at exit: by then the command's folder is on sys.path
    _seed()
    _after_import("torch", _torch_imported)
    atexit.register(_at_exit)

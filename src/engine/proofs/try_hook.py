# sitepatch try: the patched modules load from the recipes' text, in this process and in
# every Python process it starts (they inherit PYTHONPATH and SITEPATCH_TRY). Nothing is
# written: the environment's files, RECORD and __pycache__ stay as they are.
#
# This file is the sitecustomize of a private folder that sitepatch puts first on
# PYTHONPATH for the command it runs. It installs an import hook, then runs the
# environment's own sitecustomize, if it has one. Python 3.6 and later.
import os
import sys


def _sitepatch_try_read(data):
    # "sitepatch-try 1", then per file: its path, module, sha256 and byte count on a line
    # each, then that many bytes of text.
    head = b"sitepatch-try 1\n"
    if not data.startswith(head):
        raise ValueError("not a manifest of this version")
    pos = len(head)
    by_path, names = {}, set()
    while pos < len(data):
        fields = []
        for _ in range(4):
            end = data.index(b"\n", pos)
            fields.append(data[pos:end].decode("utf-8"))
            pos = end + 1
        size = int(fields[3])
        text = data[pos:pos + size].decode("utf-8")
        pos += size
        by_path[os.path.realpath(fields[0])] = {"module": fields[1], "old_sha256": fields[2], "text": text}
        names.add(fields[1])
    return by_path, names


def _sitepatch_sha256_impl():
    # The interpreter's own sha256 where it has one: hashlib loads OpenSSL (3 ms). Found
    # now, while site runs: later the command's own folder is first on sys.path, and a
    # _sha256.py or hashlib.py someone left there would be imported by the hook.
    for name in ("_sha2", "_sha256"):
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):
            pass
    import hashlib
    return hashlib.sha256


def _sitepatch_try_install():
    manifest = os.environ.get("SITEPATCH_TRY")
    if not manifest:
        return
    # Not importlib.abc: it imports importlib.resources and pathlib, 16 ms of every
    # Python start; nor json (re, enum: 7 ms): the manifest is lines and byte counts.
    # The import system takes any object with these methods.
    import importlib.machinery
    import linecache

    sha256 = _sitepatch_sha256_impl()
    try:
        with open(manifest, "rb") as f:
            data = f.read()
        by_path, names = _sitepatch_try_read(data)
    except (OSError, ValueError) as e:
        sys.stderr.write("sitepatch try: %s unreadable (%s); running unpatched\n" % (manifest, e))
        return
    warned = set()

    def warn(key, message):
        if key not in warned and not os.environ.get("SITEPATCH_TRY_QUIET"):
            warned.add(key)
            sys.stderr.write("sitepatch try: " + message + "\n")

    class PatchedLoader(object):
        """Runs the recipe's text with the real file's name: tracebacks, inspect and
        dynamo see the patched lines; no bytecode is read or written."""

        def __init__(self, inner, origin, text):
            self._inner = inner
            self._origin = origin
            self._text = text

        def create_module(self, spec):
            return None

        def get_filename(self, name=None):
            return self._origin

        def get_source(self, name=None):
            return self._text

        def is_package(self, name):
            return os.path.basename(self._origin) == "__init__.py"

        def get_code(self, name=None):
            return compile(self._text, self._origin, "exec", dont_inherit=True)

        def exec_module(self, module):
            exec(self.get_code(module.__name__), module.__dict__)

        def get_data(self, path):
            return self._inner.get_data(path)

        def get_resource_reader(self, name):
            reader = getattr(self._inner, "get_resource_reader", None)
            return reader(name) if reader else None

    class PatchedFinder(object):
        def find_spec(self, fullname, path=None, target=None):
            if fullname not in names:
                return None
            found = importlib.machinery.PathFinder.find_spec(fullname, path)
            if found is None or not found.origin:
                return None
            entry = by_path.get(os.path.realpath(found.origin))
            if entry is None:
                warn(fullname, "%s loads from %s, not the file the recipes were planned against; running it unpatched"
                     % (fullname, found.origin))
                return None
            try:
                with open(found.origin, "rb") as f:
                    now = sha256(f.read()).hexdigest()
            except OSError:
                return None
            if now != entry["old_sha256"]:
                warn(fullname, "%s changed since the plan (%s); running it unpatched" % (fullname, found.origin))
                return None
            text = entry["text"]
            found.loader = PatchedLoader(found.loader, found.origin, text)
            found.cached = None
            # linecache keeps entries whose mtime is None: tracebacks and inspect read
            # the patched lines, not the file on disk.
            linecache.cache[found.origin] = (len(text), None, text.splitlines(True), found.origin)
            return found

    sys.meta_path.insert(0, PatchedFinder())
    for name in sorted(names):
        if name in sys.modules:
            warn(name, "%s was imported before the patch could take effect (by a .pth file?); "
                 "this process runs it unpatched" % name)


def _sitepatch_dynamo_counts():
    # explain --run: dynamo's own counts, from each process that compiled, on stderr at
    # exit (one line; sitepatch sums the lines of every process).
    if not os.environ.get("SITEPATCH_DYNAMO_COUNTS"):
        return
    import atexit
    import json  # now, not at exit: by then the command's folder is on sys.path

    def dump():
        utils = sys.modules.get("torch._dynamo.utils")
        if utils is None:
            return
        try:
            counters = utils.counters
            graphs = int(counters["stats"].get("unique_graphs", 0))
            breaks = sum(int(v) for v in counters["graph_break"].values())
            line = json.dumps({"graphs": graphs, "graph_breaks": breaks, "pid": os.getpid()})
            sys.stderr.write("\nsitepatch-dynamo-counts: %s\n" % line)
            sys.stderr.flush()
        except Exception as e:  # a torch whose counters differ: say so, do not fail the run
            sys.stderr.write("\nsitepatch-dynamo-counts: %s\n" % json.dumps({"error": str(e)}))

    atexit.register(dump)


def _sitepatch_diff():
    # explain --run's differential proof (sitepatch_diff.py beside this file).
    if os.environ.get("SITEPATCH_DIFF"):
        import sitepatch_diff
        sitepatch_diff.install()


def _sitepatch_observe():
    # explain --run's observed fakes (sitepatch_observe.py beside this file).
    if os.environ.get("SITEPATCH_OBSERVE"):
        import sitepatch_observe
        sitepatch_observe.install()


def _sitepatch_try_chain():
    # The environment's own sitecustomize, as if this one were not first on the path.
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path = list(sys.path)
    this = sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        import importlib
        try:
            importlib.import_module("sitecustomize")
        except ImportError as e:
            if getattr(e, "name", None) != "sitecustomize":
                raise
            if this is not None:
                sys.modules["sitecustomize"] = this
    finally:
        sys.path[:] = saved_path


def _sitepatch_warm_child():
    # explain --run's warm runs (warm_child.py) run this hook in a process forked from
    # one whose site already ran the environment's own sitecustomize: not a second time.
    return os.environ.get("SITEPATCH_WARM_CHILD") == "1"


_sitepatch_try_install()
_sitepatch_dynamo_counts()
_sitepatch_diff()
_sitepatch_observe()
if not _sitepatch_warm_child():
    _sitepatch_try_chain()

#!/usr/bin/env python3
"""Run a call-graph corpus program and record the call edges that really happen, named as
tests/data/callgraph-corpus/README.md says; with --check, compare them with each program's
hand-written callgraph.json.

    tests/bench/callgraph_trace.py PROGRAM_DIR            # print the traced graph as JSON
    tests/bench/callgraph_trace.py --check [CORPUS_DIR]   # every program: traced vs hand-written

A program runs as `python3 main.py` would (its folder first on sys.path, no arguments, a
bare environment, stdin empty) under sys.setprofile.  A 'call' event of a frame whose code
lives in the program's folder is an edge; its caller is the nearest frame up the stack
that is a node: frames outside the folder (the standard library, C code has none),
comprehension bodies and class bodies are passed over, so `sorted(xs, key=f)` gives
caller -> f and a call in a class body belongs to the scope around the class.  A
generator (or coroutine) frame counts once, when it first runs; its caller is whoever
resumed it first (the README's rule is the function that called it: where the two differ
the override list below says so).  An imported module's top level is a node but the
import is no edge (README).

The tracer cannot see an edge where no frame of the program is on the stack, and it sees
what the README does not count in a few places; TRACE_OVERRIDES lists those per program,
each with the reason, and --check applies them before comparing.
"""
import argparse
import ast
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "data", "callgraph-corpus"))

CO_OPTIMIZED = 0x1
CO_GENERATOR = 0x20
CO_COROUTINE = 0x80
CO_ASYNC_GENERATOR = 0x200
COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")

# program (category/name) -> {"add": [[caller, callee], ...], "drop": [[caller, callee], ...], "why": "..."}
# "add": edges the README counts that the trace cannot see; "drop": traced edges the README does not count.
TRACE_OVERRIDES = {
    "generators/created_elsewhere": {
        "add": [["main.make", "main.numbers"]],
        "drop": [["main", "main.numbers"]],
        "why": "the README's edge to a generator function is from the function that calls it (make); "
               "the trace sees only who first resumed it (the top level's for loop)",
    },
    "async/gather": {
        "add": [["main.runner", "main.fetch"]],
        "drop": [["main", "main.fetch"]],
        "why": "asyncio.gather's tasks are first resumed by the event loop, under asyncio.run at the top level; "
               "the coroutines are created (called) in runner",
    },
    "generators/never_iterated": {
        "add": [["main", "main.produce"]],
        "drop": [],
        "why": "calling a generator function is a call edge even when the generator never runs (README); "
               "no frame of it ever starts, so the trace cannot see it",
    },
}


# ---------------------------------------------------------------- naming

def module_name(root, path):
    """main.py -> main, pkg/__init__.py -> pkg, pkg/sub.py -> pkg.sub; None outside root."""
    path = os.path.realpath(path)
    if not path.startswith(root + os.sep) or not path.endswith(".py"):
        return None
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join(rel)


class LambdaNames:
    """Names every lambda of a file as README says: <lambdaN>, N counting from 1 the lambdas
    whose innermost enclosing scope (def, lambda, class or module; not a comprehension) is
    the same, in the order of where each `lambda` keyword stands (line, then column)."""

    def __init__(self, source):
        self.spans = {}   # lineno -> [(body start (line, col), body end (line, col), name)]
        self._scope(ast.parse(source), [])

    def _scope(self, node, scope, body=None):
        found = []
        for child in (body if body is not None else ast.iter_child_nodes(node)):
            self._collect(child, found, scope)
        found.sort(key=lambda n: (n.lineno, n.col_offset))
        for i, lam in enumerate(found, 1):
            name = "<lambda%d>" % i
            full = ".".join(scope + [name])
            b = lam.body
            self.spans.setdefault(lam.lineno, []).append(
                ((b.lineno, b.col_offset), (b.end_lineno, b.end_col_offset), full))
            self._scope(lam, scope + [name], [lam.body])

    def _collect(self, node, found, scope):
        """Lambdas of the current scope under node; opens the scopes of defs and classes."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # decorators, defaults, bases and keywords are evaluated in the enclosing scope
            outer = list(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                outer += node.bases + [k.value for k in node.keywords]
            else:
                outer += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            for e in outer:
                self._collect(e, found, scope)
            self._scope(node, scope + [node.name], node.body)
            return
        if isinstance(node, ast.Lambda):
            found.append(node)
            for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                self._collect(d, found, scope)
            return
        for child in ast.iter_child_nodes(node):
            self._collect(child, found, scope)

    def name_of(self, code):
        cands = self.spans.get(code.co_firstlineno, [])
        if len(cands) == 1:
            return cands[0][2]
        for line, _, col, _ in code.co_positions():
            if line is None or col is None:
                continue
            inside = [c for c in cands if c[0] <= (line, col) < c[1]]
            if inside:
                return max(inside, key=lambda c: c[0])[2]  # the innermost body holding it
        return cands[0][2] if cands else "<lambda?>"


class Namer:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.lambdas = {}
        self.cache = {}

    def classify(self, code):
        """(kind, name): kind 'node', 'skip' (comprehension or class body: look further up),
        or 'outside' (not the program's code)."""
        got = self.cache.get(code)
        if got is not None:
            return got
        mod = module_name(self.root, code.co_filename)
        if mod is None:
            got = ("outside", None)
        elif code.co_name in COMPREHENSIONS:
            got = ("skip", None)
        elif code.co_name == "<module>":
            got = ("node", mod)
        elif not code.co_flags & CO_OPTIMIZED:
            got = ("skip", None)  # a class body
        else:
            got = ("node", mod + "." + self.qualified(code, mod))
        self.cache[code] = got
        return got

    def qualified(self, code, mod):
        parts = [p for p in code.co_qualname.split(".") if p != "<locals>"]
        if code.co_name != "<lambda>":
            if "<lambda>" not in parts:
                return ".".join(parts)
        # a lambda, or a def inside one: the lambda's name comes from its position
        names = self.lambdas.get(code.co_filename)
        if names is None:
            with open(code.co_filename) as f:
                names = self.lambdas[code.co_filename] = LambdaNames(f.read())
        if code.co_name == "<lambda>":
            return names.name_of(code)
        return ".".join(parts)  # a def inside a lambda: not used by the corpus


# ---------------------------------------------------------------- the run

RUNNER = r"""
import json, os, sys, threading
sys.path.insert(0, %(here)r)
import callgraph_trace as T
root = %(root)r
namer = T.Namer(root)
edges, nodes, started = set(), set(), set()
GEN = T.CO_GENERATOR | T.CO_COROUTINE | T.CO_ASYNC_GENERATOR

def prof(frame, event, arg):
    if event != "call":
        return
    code = frame.f_code
    kind, name = namer.classify(code)
    if kind != "node":
        return
    if code.co_flags & GEN:
        if id(frame) in started:
            return
        started.add(id(frame))
        keep.append(frame)
    nodes.add(name)
    if code.co_name == "<module>":
        return  # an import is no edge
    f = frame.f_back
    while f is not None:
        k, caller = namer.classify(f.f_code)
        if k == "node":
            edges.add((caller, name))
            return
        f = f.f_back

keep = []
sys.path[0:0] = [root]
sys.argv = [os.path.join(root, "main.py")]
os.chdir(root)
g = {"__name__": "__main__", "__file__": sys.argv[0], "__builtins__": __builtins__}
code = compile(open(sys.argv[0]).read(), sys.argv[0], "exec")
threading.setprofile(prof)
sys.setprofile(prof)
failed = None
try:
    exec(code, g)
except SystemExit:
    pass
except BaseException as e:
    failed = "%%s: %%s" %% (type(e).__name__, e)
sys.setprofile(None)
threading.setprofile(None)
sys.stdout.flush()
out = {"nodes": sorted(nodes), "edges": sorted(edges), "failed": failed}
with open(os.environ["TRACE_OUT"], "w") as f:
    json.dump(out, f)
"""


def trace(program_dir, python="/usr/bin/python3"):
    """Run the program; returns {"nodes": [...], "edges": [[caller, callee], ...], "failed": str|None, "stdout": str}."""
    import tempfile
    root = os.path.realpath(program_dir)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        env = {"PATH": "/usr/bin:/bin", "TRACE_OUT": out, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        p = subprocess.run([python if os.path.exists(python) else sys.executable, "-c",
                            RUNNER % {"here": HERE, "root": root}],
                           env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        if not os.path.exists(out):
            return {"nodes": [], "edges": [], "failed": "the run died: " + p.stderr[-2000:], "stdout": p.stdout}
        with open(out) as f:
            got = json.load(f)
    got["stdout"] = p.stdout
    got["edges"] = [list(e) for e in got["edges"]]
    return got


# ---------------------------------------------------------------- check

def programs(corpus):
    for dirpath, dirnames, filenames in sorted(os.walk(corpus)):
        dirnames.sort()
        if "main.py" in filenames and "callgraph.json" in filenames:
            yield os.path.relpath(dirpath, corpus), dirpath
            dirnames[:] = []


def hand_graph(program_dir):
    with open(os.path.join(program_dir, "callgraph.json")) as f:
        g = json.load(f)
    nodes = set(g)
    edges = {(a, b) for a, bs in g.items() for b in bs}
    return nodes, edges


def check(corpus, only=None, verbose=False):
    bad = 0
    count = 0
    for rel, path in programs(corpus):
        if only and not any(rel.startswith(o) for o in only):
            continue
        count += 1
        t = trace(path)
        edges = {tuple(e) for e in t["edges"]}
        nodes = set(t["nodes"])
        ov = TRACE_OVERRIDES.get(rel)
        if ov:
            for a, b in ov["add"]:
                edges.add((a, b))
                nodes.update((a, b))
            for e in ov["drop"]:
                edges.discard(tuple(e))
        hn, he = hand_graph(path)
        problems = []
        if t["failed"]:
            problems.append("the run failed: " + t["failed"])
        for e in sorted(he - edges):
            problems.append("hand-written edge not traced: %s -> %s" % e)
        for e in sorted(edges - he):
            problems.append("traced edge not hand-written: %s -> %s" % e)
        for n in sorted(hn - nodes):
            problems.append("hand-written node never ran: %s" % n)
        for n in sorted(nodes - hn):
            problems.append("node ran but is not a key: %s" % n)
        for n, callees in json.load(open(os.path.join(path, "callgraph.json"))).items():
            if callees != sorted(set(callees)):
                problems.append("callees of %s are not sorted and unique" % n)
        if problems:
            bad += 1
            print("FAIL %s" % rel)
            for p in problems:
                print("    " + p)
        elif verbose:
            print("ok   %s" % rel)
    print("%d programs, %d disagree with their trace" % (count, bad))
    return bad == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", help="a program folder, or with --check the corpus (default: %s)" % CORPUS)
    ap.add_argument("--check", action="store_true", help="compare every program's trace with its callgraph.json")
    ap.add_argument("--only", action="append", help="with --check: programs whose category/name starts with this")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.check:
        sys.exit(0 if check(a.path or CORPUS, a.only, a.verbose) else 1)
    if not a.path:
        ap.error("give a program folder, or --check")
    t = trace(a.path)
    graph = {n: [] for n in t["nodes"]}
    for x, y in t["edges"]:
        graph.setdefault(x, []).append(y)
    print(json.dumps({k: sorted(v) for k, v in sorted(graph.items())}, indent=4))
    if t["failed"]:
        print("the run failed: " + t["failed"], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Precision and recall of `sitepatch audit MODULE --callgraph` against the hand-written
call graphs of tests/data/callgraph-corpus (issue 50), and the honesty of its `complete`.

    tests/bench/bench_callgraph.py [--sitepatch build/sitepatch] [--corpus DIR | --pycg-dir DIR]
                                   [--only CATEGORY[/NAME]] [--json] [--list-misses]

For each program (a folder holding main.py and callgraph.json): one shared venv, made once;
a .pth file in its site-packages naming the program's folder (so `import main` finds it),
removed afterwards; then `SITEPATCH --venv VENV --json audit main --callgraph OUT.json`.

Counted, per category and overall, micro-averaged over edges: an edge is caller -> callee
between functions (or module top levels, as callers) defined in the program, named as the
corpus README says.  Edges to or from anything else (builtins, the standard library, other
installed code) are reported apart, and so are edges to a module's top level (an import is
no call edge in the corpus; a tool that records one is neither rewarded nor punished).
Honesty: programs the tool reports `complete: true` while it misses an edge (goal 0), and the
share of truly complete programs (meta.json complete, and the tool found every edge) that
the tool reports complete (goal >= 90%).

A tool that refuses a program (no call graph written) gets every edge of it counted missed,
and the report says it refused and why.  --pycg-dir takes any folder of programs in the same
layout (main.py + callgraph.json, meta.json optional: without it a program counts as
knowable), e.g. a PyCG-style micro-benchmark; expected callees such as "<builtin>.print"
are reported apart there too.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.path.join(REPO, "tests", "data", "callgraph-corpus")
PTH = "zz_callgraph_corpus_program.pth"


# ---------------------------------------------------------------- names

def corpus_name(tool_key):
    """The tool's function key (module:qualified) as the corpus names it (module.qualified).
    The module top level is module:<module>; a nested def may come as outer.<locals>.inner."""
    module, _, qualified = tool_key.partition(":")
    if not qualified or qualified == "<module>":
        return module
    parts = [p for p in qualified.split(".") if p != "<locals>"]
    return module + "." + ".".join(parts)


def program_modules(program_dir):
    """Every dotted module name the program folder defines (main, to_import, pkg, pkg.sub, ...)."""
    mods = set()
    for dirpath, dirnames, filenames in os.walk(program_dir):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        rel = os.path.relpath(dirpath, program_dir)
        prefix = [] if rel == "." else rel.split(os.sep)
        for f in filenames:
            if f.endswith(".py"):
                stem = f[:-3]
                parts = prefix if stem == "__init__" else prefix + [stem]
                if parts:
                    mods.add(".".join(parts))
    return mods


def top_modules(mods):
    return {m.split(".")[0] for m in mods}


def in_program(name, tops):
    return name.split(".")[0] in tops


# ---------------------------------------------------------------- inputs

def programs(corpus, only=None):
    out = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames.sort()
        if "main.py" in filenames and "callgraph.json" in filenames:
            rel = os.path.relpath(dirpath, corpus)
            dirnames[:] = []
            if only and not any(rel == o or rel.startswith(o.rstrip("/") + "/") for o in only):
                continue
            out.append((rel, dirpath))
    return sorted(out)


def expected(program_dir):
    with open(os.path.join(program_dir, "callgraph.json")) as f:
        graph = json.load(f)
    meta = {"complete": True}
    mp = os.path.join(program_dir, "meta.json")
    if os.path.exists(mp):
        with open(mp) as f:
            meta = json.load(f)
    edges = {(a, b) for a, callees in graph.items() for b in callees}
    bp = os.path.join(program_dir, "builtins.json")
    if os.path.exists(bp):
        with open(bp) as f:
            edges |= {(a, b) for a, callees in json.load(f).items() for b in callees}
    return edges, meta


# ---------------------------------------------------------------- the tool

def make_venv(root):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root], check=True)
    return subprocess.run([os.path.join(root, "bin", "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()


def run_tool(sitepatch, venv, site, program_dir, tmp, timeout):
    """Returns (document or None, why it refused or None)."""
    out = os.path.join(tmp, "callgraph.json")
    if os.path.exists(out):
        os.remove(out)
    pth = os.path.join(site, PTH)
    with open(pth, "w") as f:
        f.write(os.path.realpath(program_dir) + "\n")
    try:
        p = subprocess.run([sitepatch, "--venv", venv, "--json", "audit", "main", "--callgraph", out],
                           capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "timed out after %ds" % timeout
    except OSError as e:
        return None, "could not run %s: %s" % (sitepatch, e)
    finally:
        os.remove(pth)
    if not os.path.exists(out):
        why = (p.stderr.strip() or p.stdout.strip() or "no output").splitlines()
        return None, "exit %d, no call graph written: %s" % (p.returncode, why[0][:300] if why else "")
    try:
        with open(out) as f:
            return json.load(f), None
    except ValueError as e:
        return None, "the call graph is not JSON: %s" % e


def tool_edges(doc):
    edges = set()
    for key, fn in doc.get("functions", {}).items():
        for c in fn.get("calls", []):
            edges.add((corpus_name(key), corpus_name(c["function"])))
    return edges


# ---------------------------------------------------------------- scoring

def score(rel, program_dir, doc, refused):
    exp_all, meta = expected(program_dir)
    mods = program_modules(program_dir)
    tops = top_modules(mods)

    def split(edges):
        counted, apart, imports = set(), set(), set()
        for a, b in edges:
            if b in mods:
                imports.add((a, b))
            elif in_program(a, tops) and in_program(b, tops):
                counted.add((a, b))
            else:
                apart.add((a, b))
        return counted, apart, imports

    exp, exp_apart, _ = split(exp_all)
    got, got_apart, got_imports = split(tool_edges(doc) if doc else set())
    r = {
        "program": rel,
        "category": rel.split(os.sep)[0],
        "knowable": bool(meta.get("complete", True)),
        "refused": refused,
        "tool_complete": bool(doc.get("complete")) if doc else False,
        "tp": len(exp & got),
        "missed": sorted(exp - got),
        "extra": sorted(got - exp),
        "apart_expected": len(exp_apart),
        "apart_found": len(got_apart & exp_apart),
        "apart_tool": len(got_apart),
        "import_edges_tool": len(got_imports),
    }
    r["expected"] = len(exp)
    r["found"] = len(got)
    return r


def ratio(a, b):
    return a / b if b else None


def summarize(rows):
    tp = sum(r["tp"] for r in rows)
    found = sum(r["found"] for r in rows)
    exp = sum(r["expected"] for r in rows)
    truly = [r for r in rows if r["knowable"] and not r["missed"] and not r["refused"]]
    return {
        "programs": len(rows),
        "refused": sum(1 for r in rows if r["refused"]),
        "edges_expected": exp,
        "edges_found": found,
        "true_positives": tp,
        "precision": ratio(tp, found),
        "recall": ratio(tp, exp),
        "complete_but_missing": sum(1 for r in rows if r["tool_complete"] and r["missed"]),
        "complete_on_unknowable": sum(1 for r in rows if r["tool_complete"] and not r["knowable"]),
        "truly_complete": len(truly),
        "truly_complete_reported": sum(1 for r in truly if r["tool_complete"]),
        "complete_share": ratio(sum(1 for r in truly if r["tool_complete"]), len(truly)),
        "apart": {"expected": sum(r["apart_expected"] for r in rows),
                  "found": sum(r["apart_found"] for r in rows),
                  "tool": sum(r["apart_tool"] for r in rows),
                  "import_edges_tool": sum(r["import_edges_tool"] for r in rows)},
    }


def pct(x):
    return "  n/a " if x is None else "%5.1f%%" % (100 * x)


def print_table(by_cat, overall):
    head = "%-20s %5s %5s %7s %7s %7s %7s %9s %9s" % ("category", "progs", "refus", "edges", "prec", "recall",
                                                      "cmpl!", "lies", "cmpl-shr")
    print(head)
    print("-" * len(head))
    for name, s in list(by_cat.items()) + [("OVERALL", overall)]:
        if name == "OVERALL":
            print("-" * len(head))
        print("%-20s %5d %5d %7d %7s %7s %7d %9d %9s" % (
            name, s["programs"], s["refused"], s["edges_expected"], pct(s["precision"]), pct(s["recall"]),
            s["complete_but_missing"], s["complete_on_unknowable"], pct(s["complete_share"])))
    print()
    print("prec/recall: call edges between functions defined in the program (goals >= 98% / >= 95%)")
    print("cmpl!: programs reported complete that miss an edge (goal 0)")
    print("lies: programs reported complete whose calls cannot be known statically (meta.json complete false)")
    print("cmpl-shr: of the truly complete programs (knowable, every edge found), the share reported complete "
          "(goal >= 90%%): %d of %d" % (overall["truly_complete_reported"], overall["truly_complete"]))
    a = overall["apart"]
    print("apart (not in the numbers): %d expected edges to builtins/stdlib, %d of them found; the tool gave %d "
          "such edges and %d import edges" % (a["expected"], a["found"], a["tool"], a["import_edges_tool"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sitepatch", default=os.path.join(REPO, "build", "sitepatch"))
    ap.add_argument("--corpus", default=CORPUS, help="the corpus folder (default: %(default)s)")
    ap.add_argument("--pycg-dir", help="evaluate on this folder of programs instead (same layout)")
    ap.add_argument("--only", action="append", help="only programs under CATEGORY or CATEGORY/NAME")
    ap.add_argument("--json", action="store_true", help="print a machine-readable summary")
    ap.add_argument("--list-misses", action="store_true", help="print each missing and extra edge")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per program")
    ap.add_argument("--floor", metavar="PRECISION,RECALL",
                    help="exit 1 when precision or recall falls below these (0.97,0.98), or when a "
                         "program is reported complete while it misses an edge beyond --known-incomplete")
    ap.add_argument("--known-incomplete", type=int, default=0,
                    help="with --floor: programs reported complete that miss an edge, allowed (default 0)")
    a = ap.parse_args()

    corpus = a.pycg_dir or a.corpus
    progs = programs(corpus, a.only)
    if not progs:
        sys.exit("no program (a folder with main.py and callgraph.json) under %s" % corpus)
    sitepatch = os.path.abspath(a.sitepatch)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        site = make_venv(venv)
        for rel, path in progs:
            doc, refused = run_tool(sitepatch, venv, site, path, tmp, a.timeout)
            rows.append(score(rel, path, doc, refused))

    refusals = [r for r in rows if r["refused"]]
    cats = {}
    for r in rows:
        cats.setdefault(r["category"], []).append(r)
    by_cat = {c: summarize(rs) for c, rs in sorted(cats.items())}
    overall = summarize(rows)

    if a.json:
        print(json.dumps({"corpus": os.path.abspath(corpus), "sitepatch": sitepatch, "overall": overall,
                          "categories": by_cat,
                          "programs": [dict(r, missed=[list(e) for e in r["missed"]],
                                            extra=[list(e) for e in r["extra"]]) for r in rows]}, indent=2))
    else:
        if refusals:
            print("the tool refused %d of %d programs (every edge of them counted missed); first: %s: %s\n" % (
                len(refusals), len(rows), refusals[0]["program"], refusals[0]["refused"]))
        print_table(by_cat, overall)
    if a.list_misses:
        out = sys.stderr if a.json else sys.stdout
        print(file=out)
        for r in rows:
            if not (r["missed"] or r["extra"] or r["refused"]):
                continue
            flag = " (reported complete)" if r["tool_complete"] else ""
            print("%s%s" % (r["program"], flag), file=out)
            if r["refused"]:
                print("    refused: %s" % r["refused"], file=out)
            for x, y in r["missed"]:
                print("    missing %s -> %s" % (x, y), file=out)
            for x, y in r["extra"]:
                print("    extra   %s -> %s" % (x, y), file=out)
    if a.floor:
        want_p, want_r = (float(x) for x in a.floor.split(","))
        problems = []
        if overall["precision"] < want_p:
            problems.append("precision %.1f%% < %.1f%%" % (100 * overall["precision"], 100 * want_p))
        if overall["recall"] < want_r:
            problems.append("recall %.1f%% < %.1f%%" % (100 * overall["recall"], 100 * want_r))
        if overall["complete_but_missing"] > a.known_incomplete:
            problems.append("%d programs reported complete that miss an edge (at most %d)" % (
                overall["complete_but_missing"], a.known_incomplete))
        if overall["complete_on_unknowable"]:
            problems.append("%d unknowable programs reported complete" % overall["complete_on_unknowable"])
        if problems:
            sys.exit("below the floor: " + "; ".join(problems) + " (--list-misses says which edges)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Issue 50: the audit walk judged against entries traced by hand before it ever ran on them.

    tests/bench/bench_audit_traces.py SITEPATCH [--torch-venv V] [--debian-venv V]
        [--traces DIR] [--rounds N] [--only SLUG] [--keep DIR] [--json]

For each tests/data/audit-traces/*.json it runs `SITEPATCH --venv V --json audit ENTRY`
under `/usr/bin/time -f "%e %M"` (wall seconds, peak KB; the median of --rounds runs) and
compares the chains with the trace:

- recall: traced sites found. A site (function, line, rule) is found when some chain's last
  step is at the same line with the same rule id and names the same function (or the same
  file: a module's top level may be named differently). Sites marked proposed_rule (issue
  50's lock, urlopen and datetime rules) are counted apart too, since their rule ids are not
  shipped yet; a chain at the same place under another rule id is listed as "other rule".
- impossible chains: a chain whose last step is a must_not_report place (file and line), or
  that passes through one of the trace's dead_functions.
- beyond a stop: a chain that passes through a function the trace stopped at (its body was
  not traced), so it is neither confirmed nor refuted here.
- unclassified: every other chain, to check by hand against the source.

The torch venv defaults to the tests' ~/.cache/sitepatch-tests/torch-2.13.0-py311. The
Debian entries need a Python that imports from /usr/lib/python3/dist-packages; without
--debian-venv one is made in a temporary folder with
`/usr/bin/python3 -m venv --system-site-packages --without-pip`.
Prints a markdown table, then each entry's misses and chains to check; --json prints all
of it as one JSON document instead.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRACES = os.path.join(HERE, "..", "data", "audit-traces")


def norm(function):
    """module:Qual.name with `.<locals>` dropped (nested functions are named either way)."""
    return (function or "").replace(".<locals>", "")


def run_audit(binary, venv, entry, rounds, keep):
    times, peaks, doc, err = [], [], None, None
    with tempfile.TemporaryDirectory() as work:
        tfile = os.path.join(work, "time")
        for _ in range(rounds):
            cmd = ["/usr/bin/time", "-o", tfile, "-f", "%e %M", binary, "--venv", venv, "--json", "audit", entry]
            p = subprocess.run(cmd, capture_output=True, text=True)
            try:
                wall, kb = open(tfile).read().split()[-2:]
                times.append(float(wall))
                peaks.append(int(kb))
            except (OSError, ValueError):
                pass
            try:
                doc = json.loads(p.stdout)
                err = None
            except ValueError:
                err = "exit %d, no JSON on stdout: %s" % (p.returncode, (p.stderr or p.stdout).strip()[-400:])
            if keep and doc is not None:
                os.makedirs(keep, exist_ok=True)
                with open(os.path.join(keep, entry.replace(":", "--") + ".json"), "w") as fh:
                    json.dump(doc, fh, indent=1)
    return doc, err, (statistics.median(times) if times else None), (statistics.median(peaks) / 1024 if peaks else None)


def chain_view(c):
    last = c["steps"][-1] if c["steps"] else {}
    return {
        "function": last.get("function"),
        "file": last.get("file"),
        "line": last.get("line"),
        "rule": (c.get("rule") or {}).get("id"),
        "operation": c.get("operation"),
        "steps": [s.get("function") for s in c["steps"]],
    }


def judge(trace, doc):
    chains = [chain_view(c) for c in doc.get("chains", [])]
    sites = trace["sites"]
    never = {(m["file"], m["line"]): m for m in trace.get("must_not_report", [])}
    dead = {norm(d["function"]): d for d in trace.get("dead_functions", [])}
    stops = {norm(s["function"]) for s in trace.get("stopped", []) if not s.get("body_traced", True)}
    site_keys = {(s["file"], s["line"], s["rule"]) for s in sites}

    def at_site(c, s):
        return c["line"] == s["line"] and (norm(c["function"]) == norm(s["function"]) or c["file"] == s["file"])

    found, other_rule, missed = [], [], []
    used = set()
    for s in sites:
        hit = [i for i, c in enumerate(chains) if at_site(c, s) and c["rule"] == s["rule"]]
        if hit:
            found.append(s)
            used.update(hit)
            continue
        near = [i for i, c in enumerate(chains) if at_site(c, s)]
        if near:
            other_rule.append({"site": s, "reported_rules": sorted({chains[i]["rule"] for i in near})})
            used.update(near)
        else:
            missed.append(s)

    impossible, beyond, unclassified = [], [], []
    for i, c in enumerate(chains):
        m = never.get((c["file"], c["line"]))
        if m is not None and (c["file"], c["line"], c["rule"]) not in site_keys:
            impossible.append({"chain": c, "why": m["why"], "kind": m.get("kind")})
            continue
        through = [f for f in (norm(x) for x in c["steps"][1:]) if f in dead]
        if through:
            d = dead[through[0]]
            impossible.append({"chain": c, "why": "passes through %s: %s" % (through[0], d["why"]), "kind": d.get("kind")})
            continue
        if i in used:
            continue
        stop = [f for f in (norm(x) for x in c["steps"][1:]) if f in stops]
        (beyond if stop else unclassified).append(c)

    shipped = [s for s in sites if not s.get("proposed_rule")]
    shipped_found = [s for s in found if not s.get("proposed_rule")]
    return {
        "sites": len(sites),
        "found": len(found),
        "recall": len(found) / len(sites) if sites else None,
        "shipped_sites": len(shipped),
        "shipped_found": len(shipped_found),
        "shipped_recall": len(shipped_found) / len(shipped) if shipped else None,
        "chains": len(chains),
        "impossible": impossible,
        "beyond_stop": beyond,
        "unclassified": unclassified,
        "missed": missed,
        "other_rule": other_rule,
        "unfollowed": doc.get("unfollowed"),
        "functions": doc.get("functions"),
    }


def pct(x):
    return "" if x is None else "%.0f%%" % (100 * x)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sitepatch")
    ap.add_argument("--torch-venv", default=os.path.expanduser("~/.cache/sitepatch-tests/torch-2.13.0-py311"))
    ap.add_argument("--debian-venv", help="a venv that imports from /usr/lib/python3/dist-packages")
    ap.add_argument("--traces", default=TRACES)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", action="append", help="a trace file's slug (repeatable)")
    ap.add_argument("--keep", help="write each audit's JSON into this folder")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    files = sorted(glob.glob(os.path.join(a.traces, "*.json")))
    if a.only:
        files = [f for f in files if os.path.basename(f)[:-5] in a.only]
    traces = [(os.path.basename(f)[:-5], json.load(open(f))) for f in files]

    tmp = None
    venvs = {"torch-2.13.0-py311": a.torch_venv, "debian-dist-packages": a.debian_venv}
    if any(t["venv"] == "debian-dist-packages" for _, t in traces) and not a.debian_venv:
        tmp = tempfile.TemporaryDirectory()
        venvs["debian-dist-packages"] = os.path.join(tmp.name, "debian")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", "--without-pip",
                        venvs["debian-dist-packages"]], check=True)

    results = []
    for slug, t in traces:
        doc, err, wall, mb = run_audit(a.sitepatch, venvs[t["venv"]], t["entry"], a.rounds, a.keep)
        r = {"slug": slug, "entry": t["entry"], "venv": t["venv"], "seconds": wall, "peak_mb": mb, "error": err}
        if doc is not None:
            r.update(judge(t, doc))
        results.append(r)

    if a.json:
        print(json.dumps({"sitepatch": a.sitepatch, "rounds": a.rounds, "entries": results}, indent=1))
        return 0

    print("| entry | venv | sites | found | recall | recall, shipped rules | chains | impossible | beyond a stop | to check | unfollowed | s | peak MB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    tot = {"sites": 0, "found": 0, "ssites": 0, "sfound": 0, "chains": 0, "impossible": 0}
    for r in results:
        if r.get("error") or "sites" not in r:
            print("| %s | %s | error: %s |" % (r["entry"], r["venv"], r.get("error")))
            continue
        print("| %s | %s | %d | %d | %s | %s | %d | %d | %d | %d | %s | %s | %s |" % (
            r["entry"], r["venv"], r["sites"], r["found"], pct(r["recall"]),
            "%d/%d" % (r["shipped_found"], r["shipped_sites"]), r["chains"], len(r["impossible"]),
            len(r["beyond_stop"]), len(r["unclassified"]), r["unfollowed"],
            "" if r["seconds"] is None else "%.2f" % r["seconds"],
            "" if r["peak_mb"] is None else "%.0f" % r["peak_mb"]))
        tot["sites"] += r["sites"]; tot["found"] += r["found"]
        tot["ssites"] += r["shipped_sites"]; tot["sfound"] += r["shipped_found"]
        tot["chains"] += r["chains"]; tot["impossible"] += len(r["impossible"])
    if tot["sites"]:
        print("\nIn all: recall %d of %d sites (%s); shipped rules only %d of %d (%s); impossible chains %d of %d."
              % (tot["found"], tot["sites"], pct(tot["found"] / tot["sites"]), tot["sfound"], tot["ssites"],
                 pct(tot["sfound"] / tot["ssites"]) if tot["ssites"] else "", tot["impossible"], tot["chains"]))
    for r in results:
        if "sites" not in r:
            continue
        lines = []
        for s in r["missed"]:
            lines.append("- missed: %s %s:%d %s%s" % (s["function"], s["file"], s["line"], s["rule"],
                                                       " (proposed rule)" if s.get("proposed_rule") else ""))
        for o in r["other_rule"]:
            s = o["site"]
            lines.append("- other rule: %s %s:%d traced %s, reported %s" % (s["function"], s["file"], s["line"],
                                                                           s["rule"], ", ".join(map(str, o["reported_rules"]))))
        for x in r["impossible"]:
            c = x["chain"]
            lines.append("- impossible (%s): %s %s:%s %s via %s" % (x["kind"], c["function"], c["file"], c["line"],
                                                                    c["rule"], " -> ".join(c["steps"])))
        for c in r["unclassified"]:
            lines.append("- to check: %s %s:%s %s via %s" % (c["function"], c["file"], c["line"], c["rule"],
                                                             " -> ".join(c["steps"])))
        if r["beyond_stop"]:
            lines.append("- %d chains beyond a stop of the trace (not judged)" % len(r["beyond_stop"]))
        if lines:
            print("\n### %s\n" % r["entry"])
            print("\n".join(lines))
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())

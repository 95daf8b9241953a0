#!/usr/bin/env python3
"""explain --run over the dynamo corpus (tests/data/dynamo-corpus): for each shape, each
--jobs value and each --modes value (warm: runs forked from the session's Python that
imported torch once; cold: --cold, each run its own Python), one search from a fresh
venv; prints a markdown table (shape, mode, compiled or not, runs, breaks got past,
candidates rejected, wall seconds, the kinds of fix kept, the median run), whether warm
and cold kept the same fixes after the same runs and verdicts, and the median run of
each mode (all runs; and the runs after each search's first, which starts the server)
with their ratio.

    tests/bench/bench_explain_corpus.py SITEPATCH [--jobs 1,8] [--modes warm,cold] [--device cpu|cuda] [--json OUT]

Run it with the Python that holds torch: each venv sees that torch through a .pth file.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "data", "dynamo-corpus")


def make_venv(root, torch_site):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root], check=True)
    site = subprocess.run([os.path.join(root, "bin", "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "shared_torch.pth"), "w") as f:
        f.write(torch_site + "\n")
    return site


def one(sitepatch, name, shape, jobs, device, torch_site, mode):
    with tempfile.TemporaryDirectory() as tmp:
        site = make_venv(os.path.join(tmp, "venv"), torch_site)
        shutil.copytree(os.path.join(CORPUS, name, "site-packages"), site, dirs_exist_ok=True)
        app = os.path.join(tmp, "app")
        os.makedirs(app)
        if shape.get("repro"):
            # The shape's own model script: compiled first, then eager, exit 1 when they differ.
            shutil.copy(os.path.join(CORPUS, name, shape["repro"]), os.path.join(app, "repro.py"))
        else:
            with open(os.path.join(app, "repro.py"), "w") as f:
                f.write("import torch\n\nimport %s\n\nf = torch.compile(lambda x: %s, backend=\"eager\", fullgraph=True)\n"
                        "print(f(torch.ones(4, device=%r)).tolist())\n" % (name, shape["call"], device))
        recipe = os.path.join(tmp, "proven.yaml")
        start = time.monotonic()
        r = subprocess.run([sitepatch, "--venv", os.path.join(tmp, "venv"), "--json", "explain", "--run", "python repro.py",
                            "--jobs", str(jobs), "--max-runs", "12", "--recipe", recipe] +
                           (["--cold"] if mode == "cold" else []),
                           cwd=app, capture_output=True, text=True)
        wall = time.monotonic() - start
        # The proven recipe, tried on the model script: does compiled equal eager under it?
        equal = None
        if shape.get("repro") and os.path.exists(recipe):
            t = subprocess.run([sitepatch, "--venv", os.path.join(tmp, "venv"), "try", recipe, "--", "python", "repro.py"],
                               cwd=app, capture_output=True, text=True)
            equal = t.returncode == 0
        try:
            j = json.loads(r.stdout)
        except ValueError:
            return {"shape": name, "jobs": jobs, "mode": mode, "error": (r.stderr or r.stdout)[-400:], "wall": wall}
        runs = j.get("runs", [])
        tried = [x for x in runs if x["tried"] is not None]
        return {
            "shape": name,
            "jobs": jobs,
            "mode": mode,
            "starts": [x.get("start", "") for x in runs],
            "status": r.returncode,
            "compiled": bool(runs) and any(x["counts"]["compiled"] for x in runs),
            "runs": len(runs),
            "kept": [k["describe"] for k in j.get("kept", [])],
            "rejected": sum(1 for x in tried if not x["kept"]),
            "wall": wall,
            "single": [x["counts"]["seconds"] for x in runs],
            "verdicts": [(x["tried"], x["verdict"], x["batch"]) for x in tried],
            "minimizing": sum(1 for x in runs if x.get("minimizing")),
            "equal": equal,
            "expected": shape["fixes"],
        }


def summarize(rows):
    # Warm against cold: the same search (fixes kept, runs, verdicts), and the runs' medians.
    ok = [r for r in rows if "error" not in r]
    by = dict(((r["shape"], r["jobs"], r["mode"]), r) for r in ok)
    same = []
    for (shape, jobs, mode), r in sorted(by.items()):
        c = by.get((shape, jobs, "cold"))
        if mode == "warm" and c is not None:
            alike = r["kept"] == c["kept"] and r["runs"] == c["runs"] and r["verdicts"] == c["verdicts"]
            same.append("%s (jobs %d): %s" % (shape, jobs, "same" if alike else "DIFFERENT"))
    if same:
        print()
        print("warm vs cold, kept fixes, runs and verdicts: " + "; ".join(same))
    medians = {}
    for mode in ("warm", "cold"):
        runs = [s for r in ok if r["mode"] == mode for s in r["single"]]
        later = [s for r in ok if r["mode"] == mode for s in r["single"][1:]]
        if runs:
            medians[mode] = (statistics.median(runs), statistics.median(later) if later else 0.0)
            print("%s: median run %.2f s over %d runs; after each search's first %.2f s over %d" % (
                mode, medians[mode][0], len(runs), medians[mode][1], len(later)))
    if "warm" in medians and "cold" in medians and medians["cold"][0] > 0:
        print("warm / cold: %.2f (all runs), %.2f (after the first)" % (
            medians["warm"][0] / medians["cold"][0], medians["warm"][1] / medians["cold"][1] if medians["cold"][1] else 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sitepatch")
    ap.add_argument("--jobs", default="1,%d" % max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json")
    ap.add_argument("--only", default="")
    ap.add_argument("--modes", default="warm,cold")
    a = ap.parse_args()
    import torch

    torch_site = os.path.dirname(os.path.dirname(torch.__file__))
    print("torch %s, %d cores, device %s" % (torch.__version__, os.cpu_count(), a.device), flush=True)
    rows = []
    for name in sorted(os.listdir(CORPUS)):
        if a.only and name not in a.only.split(","):
            continue
        with open(os.path.join(CORPUS, name, "shape.json")) as f:
            shape = json.load(f)
        for jobs in [int(j) for j in a.jobs.split(",")]:
            for mode in a.modes.split(","):
                row = one(a.sitepatch, name, shape, jobs, a.device, torch_site, mode)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print("| shape | jobs | mode | compiled | runs (minimizing) | kept | rejected | wall s | median run s | as expected "
          "| recipe: compiled = eager |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print("| %s | %d | %s | error | | | | %.1f | | %s | |" % (r["shape"], r["jobs"], r["mode"], r["wall"],
                                                                  r["error"][-80:]))
            continue
        kinds = ", ".join(k.split(" on ")[0] for k in r["kept"]) or "none"
        print("| %s | %d | %s | %s | %d (%d) | %s | %d | %.1f | %.2f | %s | %s |" % (
            r["shape"], r["jobs"], r["mode"], "yes" if r["compiled"] else "no", r["runs"], r["minimizing"], kinds,
            r["rejected"], r["wall"], statistics.median(r["single"]) if r["single"] else 0,
            "yes" if r["kept"] == r["expected"] else "NO",
            "-" if r["equal"] is None else ("yes" if r["equal"] else "NO")))
    summarize(rows)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

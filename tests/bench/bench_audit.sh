#!/usr/bin/env bash
# audit --path against ast-grep and a bare tree-sitter parse, on one corpus, in one run:
# medians of ROUNDS rounds (the three tools take turns within a round, so load from
# elsewhere hits them alike), peak RSS, match counts; then Python's `ast` as the
# reference set of call sites, and a check that sitepatch reports each of them.
#
# usage: bench_audit.sh [CORPUS] [ROUNDS]   (default: /usr/lib/python3/dist-packages, 5)
# Needs: build/sitepatch, build/tests/bench/sitepatch_bench_parse, ast-grep (AST_GREP or
# in PATH; scripts/bench.sh installs it under build/_deps/ast-grep), /usr/bin/time.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${1:-/usr/lib/python3/dist-packages}
rounds=${2:-5}
sitepatch=${SITEPATCH:-$root/build/sitepatch}
bare=${BARE_PARSE:-$root/build/tests/bench/sitepatch_bench_parse}
astgrep=${AST_GREP:-$(command -v ast-grep || echo "$root/build/_deps/ast-grep/node_modules/.bin/ast-grep")}
work=$(mktemp -d /tmp/sitepatch-bench-audit-XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/rules.yaml" <<'YAML'
rules:
  - id: subprocess
    match: subprocess.*
    category: process
    message: spawns a process
  - id: open
    match: open
    category: file-io
    message: opens a file
YAML
cat >"$work/sg.yml" <<'YAML'
id: function-with-subprocess-or-open
language: python
rule:
  kind: function_definition
  has:
    stopBy: end
    any:
      - pattern: subprocess.$F($$$ARGS)
      - pattern: open($$$ARGS)
YAML

# timed NAME CMD...: appends "seconds peak_kb" to $work/NAME.times; stdout to $work/NAME.out
timed() {
  local name=$1
  shift
  /usr/bin/time -o "$work/time" -f "%e %M" "$@" >"$work/$name.out" 2>"$work/$name.err"
  cat "$work/time" >>"$work/$name.times"
}

echo "corpus: $corpus ($(find "$corpus" -name '*.py' -not -path '*/__pycache__/*' | wc -l) .py files," \
  "$(find "$corpus" -name '*.py' -not -path '*/__pycache__/*' -printf '%s\n' | awk '{s+=$1} END {printf "%.1f", s/1e6}') MB)"
echo "cores: $(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "ast-grep: $("$astgrep" --version)"
for ((i = 1; i <= rounds; i++)); do
  timed astgrep "$astgrep" scan -r "$work/sg.yml" --json=stream "$corpus"
  timed bare "$bare" "$corpus"
  timed sitepatch "$sitepatch" --json audit --path "$corpus" --rules "$work/rules.yaml" --no-default-rules
  echo "round $i: ast-grep $(tail -1 "$work/astgrep.times") | bare parse $(tail -1 "$work/bare.times") |" \
    "sitepatch $(tail -1 "$work/sitepatch.times")   (seconds, peak KB)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "python ast (reference, one round):"
timed ast python3 "$here/ast_count.py" "$corpus" "$work/ast_sites.txt"

python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
def times(name):
    rows = [l.split() for l in open(f"{work}/{name}.times") if l.strip()]
    return statistics.median(float(r[0]) for r in rows), max(int(r[1]) for r in rows)
sg_t, sg_m = times("astgrep")
bp_t, bp_m = times("bare")
sp_t, sp_m = times("sitepatch")
ast_t, ast_m = times("ast")
sg_matches = sum(1 for l in open(f"{work}/astgrep.out") if l.strip())
doc = json.load(open(f"{work}/sitepatch.out"))
sp_sites, resolved = set(), {}
for f in doc["files"]:
    for x in f["findings"]:
        key = "%s:%d:%d" % (f["file"], x["line"], x["column"])
        sp_sites.add(key)
        resolved[key] = (x["written"], x["operation"])
ast_line = open(f"{work}/ast.out").read().split()
ast_sites = set(open(f"{work}/ast_sites.txt").read().split())
print()
print("| tool | median s | vs ast-grep | peak RSS MB | matches |")
print("| --- | ---: | ---: | ---: | --- |")
print(f"| ast-grep (function containing subprocess.*/open call) | {sg_t:.2f} | 1.00 | {sg_m/1024:.0f} | {sg_matches} functions |")
print(f"| bare tree-sitter parse, every file | {bp_t:.2f} | {bp_t/sg_t:.2f} | {bp_m/1024:.0f} | - |")
print(f"| sitepatch audit --path | {sp_t:.2f} | {sp_t/sg_t:.2f} | {sp_m/1024:.0f} | {doc['calls']} call sites ({doc['module_level_calls']} at module level) in {doc['functions']} functions; parsed {doc['files_parsed']} of {doc['files_total']} files ({doc['bytes_parsed']/1e6:.1f} of {doc['bytes_total']/1e6:.1f} MB) |")
print(f"| python ast (reference, 1 round) | {ast_t:.2f} | {ast_t/sg_t:.2f} | {ast_m/1024:.0f} | {ast_line[5]} call sites in {ast_line[7]} functions |")
print()
missing = sorted(ast_sites - sp_sites)
extra = sorted(sp_sites - ast_sites)
print(f"sitepatch call sites: {len(sp_sites)}; ast: {len(ast_sites)}; in both: {len(ast_sites & sp_sites)}")
print(f"reported by sitepatch only ({len(extra)}), another spelling resolved through imports, e.g.:")
for k in extra[:8]:
    print(f"  {k}  {resolved[k][0]}(...) is {resolved[k][1]}")
print(f"found by ast only ({len(missing)}): the name is bound to something else in that file:")
import os
corpus = doc["root"]
for k in missing:
    rel, line, col = k.rsplit(":", 2)
    text = open(os.path.join(corpus, rel), errors="replace").read().splitlines()[int(line) - 1].strip()
    print(f"  {k}  {text[:90]}")
print("superset check:", "OK" if not missing else f"{len(missing)} ast call sites not reported (listed above)")
PY

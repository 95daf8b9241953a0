#!/usr/bin/env bash
# audit --path with the SHIPPED rules (recipes/rules/dynamo.yaml, what users run)
# against ast-grep running tests/bench/shipped_rules.sg.yml (one call pattern per
# shipped rule), on one corpus, in one run: the two take turns within each round (so
# load from elsewhere hits them alike); medians, peak RSS, what each found. Then
# sitepatch's peak RSS and time at several thread counts (SITEPATCH_THREADS).
#
# usage: bench_audit_shipped.sh [CORPUS] [ROUNDS] [THREADS...]
#        (default: /usr/lib/python3/dist-packages, 5, 1 2 4 8 16)
# Needs: build/sitepatch, ast-grep (AST_GREP, in PATH, or scripts/bench.sh's copy under
# build/_deps/ast-grep), /usr/bin/time.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${1:-/usr/lib/python3/dist-packages}
rounds=${2:-5}
shift $(($# > 2 ? 2 : $#)) || true
threads=("$@")
((${#threads[@]})) || threads=(1 2 4 8 16)
sitepatch=${SITEPATCH:-$root/build/sitepatch}
astgrep=${AST_GREP:-$(command -v ast-grep || echo "$root/build/_deps/ast-grep/node_modules/.bin/ast-grep")}
work=$(mktemp -d /tmp/sitepatch-bench-shipped-XXXXXX)
trap 'rm -rf "$work"' EXIT

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
echo "ast-grep: $("$astgrep" --version); rules: $(grep -c '^id:' "$here/shipped_rules.sg.yml") (sitepatch: $("$sitepatch" --json rules | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rules"]))'))"
for ((i = 1; i <= rounds; i++)); do
  timed astgrep "$astgrep" scan -r "$here/shipped_rules.sg.yml" --json=stream "$corpus"
  timed sitepatch "$sitepatch" --json audit --path "$corpus"
  echo "round $i: ast-grep $(tail -1 "$work/astgrep.times") | sitepatch $(tail -1 "$work/sitepatch.times")   (seconds, peak KB)"
done
for t in "${threads[@]}"; do
  SITEPATCH_THREADS=$t timed "threads$t" "$sitepatch" --json audit --path "$corpus"
  echo "SITEPATCH_THREADS=$t: $(tail -1 "$work/threads$t.times")   (seconds, peak KB)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "${threads[@]}" <<'PY'
import collections, json, statistics, sys
work, threads = sys.argv[1], sys.argv[2:]
def times(name):
    rows = [l.split() for l in open(f"{work}/{name}.times") if l.strip()]
    return statistics.median(float(r[0]) for r in rows), max(int(r[1]) for r in rows)
sg_t, sg_m = times("astgrep")
sp_t, sp_m = times("sitepatch")
sg = [json.loads(l) for l in open(f"{work}/astgrep.out") if l.strip()]
by_rule = collections.Counter(m["ruleId"] for m in sg)
doc = json.load(open(f"{work}/sitepatch.out"))
sp_rule = collections.Counter(x["rule"]["id"] for f in doc["files"] for x in f["findings"])
print()
print("| tool | median s | vs ast-grep | peak RSS MB | found |")
print("| --- | ---: | ---: | ---: | --- |")
print(f"| ast-grep, {len(by_rule)} of its rules matched | {sg_t:.2f} | 1.00 | {sg_m/1024:.0f} | {len(sg)} call sites |")
print(f"| sitepatch audit --path (shipped rules) | {sp_t:.2f} | {sp_t/sg_t:.2f} | {sp_m/1024:.0f} | {doc['calls']} call sites"
      f" ({doc['module_level_calls']} at module level) in {doc['functions']} functions; parsed {doc['files_parsed']} of"
      f" {doc['files_total']} files ({doc['bytes_parsed']/1e6:.1f} of {doc['bytes_total']/1e6:.1f} MB) |")
print()
print("| SITEPATCH_THREADS | s (one run) | peak RSS MB |")
print("| ---: | ---: | ---: |")
for t in threads:
    s, m = times(f"threads{t}")
    print(f"| {t} | {s:.2f} | {m/1024:.0f} |")
print()
print("found per rule (ast-grep matches the name as written; sitepatch as resolved through imports):")
for rid in sorted(set(by_rule) | set(sp_rule)):
    print(f"  {rid:34} ast-grep {by_rule[rid]:6}  sitepatch {sp_rule[rid]:6}")
PY

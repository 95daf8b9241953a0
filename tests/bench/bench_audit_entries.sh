#!/usr/bin/env bash
# Issue 38's six audit entries on real torch (the tests' 2.13 CPU venv by default): two
# builds side by side, taking turns, ROUNDS rounds; the median wall time and peak RSS of
# each entry per build, and what each found (chains, unfollowed calls, functions).
#   tests/bench/bench_audit_entries.sh OLD_BINARY NEW_BINARY [VENV] [ROUNDS]
set -euo pipefail
old=${1:?old sitepatch binary}
new=${2:?new sitepatch binary}
venv=${3:-$HOME/.cache/sitepatch-tests/torch-2.13.0-py311}
rounds=${4:-5}
export SITEPATCH_THREADS=${SITEPATCH_THREADS:-2}
entries="torch.utils.cpp_extension:load_inline torch.hub:load_state_dict_from_url
  torch.utils.collect_env:get_pretty_env_info torch.cuda:get_device_capability
  torch._inductor.codecache:PyCodeCache.load torch._inductor.codecache:CppCodeCache.load"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in $(seq "$rounds"); do
  for e in $entries; do
    for which in old new; do
      bin=$old
      [ "$which" = new ] && bin=$new
      /usr/bin/time -o "$work/t" -f "%e %M" "$bin" --venv "$venv" --json audit "$e" > "$work/$which-$e.json" 2>/dev/null
      echo "$which $e $(cat "$work/t")" >> "$work/times"
    done
  done
done
python3 - "$work" $entries <<'PY'
import json, statistics, sys
work, entries = sys.argv[1], sys.argv[2:]
rows = [l.split() for l in open(work + "/times")]
print("| entry | old s | new s | old MB | new MB | old chains | new chains | old unfollowed | new unfollowed |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for e in entries:
    s = {w: [float(r[2]) for r in rows if r[0] == w and r[1] == e] for w in ("old", "new")}
    m = {w: [int(r[3]) / 1024 for r in rows if r[0] == w and r[1] == e] for w in ("old", "new")}
    d = {w: json.load(open("%s/%s-%s.json" % (work, w, e))) for w in ("old", "new")}
    print("| %s | %.2f | %.2f | %.0f | %.0f | %d | %d | %d | %d |" % (
        e, statistics.median(s["old"]), statistics.median(s["new"]), statistics.median(m["old"]),
        statistics.median(m["new"]), len(d["old"]["chains"]), len(d["new"]["chains"]),
        len(d["old"]["unresolved"]), len(d["new"]["unresolved"])))
PY

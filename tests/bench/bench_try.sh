#!/usr/bin/env bash
# sitepatch try's cost on top of the command it runs: `python -c "import probe; ..."`
# plain, and under `sitepatch try fix.yaml --`, taking turns each round (load from
# elsewhere hits both alike); medians and the difference. Issue 29's goal: at most 60 ms.
#
# usage: bench_try.sh [ROUNDS]   (default 31)
# Needs: build/sitepatch, python3 (venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-31}
sitepatch=${SITEPATCH:-$root/build/sitepatch}
work=$(mktemp -d /tmp/sitepatch-bench-try-XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 -m venv --without-pip "$work/venv"
site=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mkdir -p "$site/probe"
# A module of a few hundred lines, as a kernel library's is.
{
  echo "import subprocess"
  for i in $(seq 1 200); do printf 'def f%d(x):\n    return x + %d\n' "$i" "$i"; done
  printf 'def answer():\n    return "unpatched"\n'
} >"$site/probe/__init__.py"
cat >"$work/fix.yaml" <<'YAML'
id: probe-fix
edits:
  - module: probe
    function: answer
    replace-body: |
      return "patched"
YAML
code='import probe; assert probe.answer() in ("patched", "unpatched")'
"$work/venv/bin/python" -c "$code"  # bytecode cached, as an installed package has it

ms() {  # ms CMD...: milliseconds one run takes
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "cores: $(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
for ((i = 1; i <= rounds; i++)); do
  ms "$work/venv/bin/python" -c "$code" >>"$work/plain"
  ms "$sitepatch" --venv "$work/venv" -q try "$work/fix.yaml" -- "$work/venv/bin/python" -c "$code" >>"$work/try"
done
p=$(median <"$work/plain")
t=$(median <"$work/try")
echo
echo "| command | median ms | runs |"
echo "| --- | ---: | ---: |"
echo "| python -c 'import probe' | $p | $rounds |"
echo "| sitepatch try fix.yaml -- (the same) | $t | $rounds |"
echo "| try's cost | $(awk -v a="$t" -v b="$p" 'BEGIN {print a - b}') | |"

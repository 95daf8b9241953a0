#!/usr/bin/env bash
# sync with nothing to do (5 recipes, all applied) against `list` on the same environment
# (issue 52's goal: under 1.5x list). Each round runs both once, in turn; medians and the
# median of the per-round ratios.
#
# usage: bench_sync.sh [ROUNDS]   (default 21)
# Needs: build/sitepatch, python3 (venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-21}
sitepatch=${SITEPATCH:-$root/build/sitepatch}
work=$(mktemp -d /tmp/sitepatch-bench-sync-XXXXXX)
trap 'rm -rf "$work"' EXIT

# A package of 5 modules of 40 functions each, and one recipe per module.
mkdir -p "$work/src/benchpkg" "$work/patches"
for m in 0 1 2 3 4; do
  python3 - "$work/src/benchpkg/m$m.py" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for k in range(40):
        f.write("def f%d(x):\n    y = x + %d\n    return y * 2\n\n\n" % (k, k))
PY
  printf 'id: fix-m%s\nedits:\n  - module: benchpkg.m%s\n    function: f7\n    replace-body: |\n      return x * 7\n' \
    "$m" "$m" >"$work/patches/m$m.yaml"
done
: >"$work/src/benchpkg/__init__.py"
python3 "$root/scripts/build_wheel.py" "$work/src" benchpkg 1.0 "$work" >/dev/null
python3 -m venv "$work/venv" >/dev/null
"$work/venv/bin/python" -m pip install -q --no-index --no-deps "$work"/benchpkg-1.0-py3-none-any.whl 2>/dev/null
"$sitepatch" --venv "$work/venv" -q sync "$work/patches" >/dev/null

python3 "$here/side_by_side.py" "$rounds" "sync (nothing to do)" "list" -- \
  "$sitepatch" --venv "$work/venv" sync "$work/patches" --- "$sitepatch" --venv "$work/venv" list

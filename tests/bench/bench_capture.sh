#!/usr/bin/env bash
# capture's cost on a distribution of 2,000 files with 3 edited by hand (issue 30's goal:
# under 1 s), against what a user does without it: `diff -r` of the installed package
# against the unpacked wheel (which finds the files, not the edits), and hashing every
# file against RECORD in Python (what `capture --hash-all` does, and pip-based checkers).
# Each round runs every command once, in turn; medians.
#
# usage: bench_capture.sh [ROUNDS] [FILES]   (defaults 11 and 2000)
# Needs: build/sitepatch, python3 (venv), diff.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-11}
files=${2:-2000}
sitepatch=${SITEPATCH:-$root/build/sitepatch}
work=$(mktemp -d /tmp/sitepatch-bench-capture-XXXXXX)
trap 'rm -rf "$work"' EXIT

# A wheel of $files modules in 20 packages, each module ~60 lines, built as pip's are.
python3 - "$work" "$files" <<'PY'
import base64, hashlib, os, sys, zipfile
work, n = sys.argv[1], int(sys.argv[2])
rows, wheel = [], os.path.join(work, "bigkern-1.0-py3-none-any.whl")
def rec(name, data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    rows.append("%s,sha256=%s,%d" % (name, h, len(data)))
with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(n):
        name = "bigkern/p%02d/m%04d.py" % (i % 20, i) if i >= 20 else "bigkern/p%02d/__init__.py" % i
        body = "import os\n\nLIMIT = %d\n\n\n" % i + "".join(
            "def f%d(x):\n    \"\"\"Step %d.\"\"\"\n    y = x + %d\n    return y * LIMIT\n\n\n" % (k, k, k) for k in range(10))
        z.writestr(name, body); rec(name, body.encode())
    for name, data in (("bigkern-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: bigkern\nVersion: 1.0\n"),
                       ("bigkern-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n")):
        z.writestr(name, data); rec(name, data.encode())
    rows.append("bigkern-1.0.dist-info/RECORD,,")
    z.writestr("bigkern-1.0.dist-info/RECORD", "\n".join(rows) + "\n")
PY
python3 -m venv "$work/venv" >/dev/null
"$work/venv/bin/python" -m pip install -q --no-index --no-deps "$work/bigkern-1.0-py3-none-any.whl" 2>/dev/null
site=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mkdir "$work/unpacked" && (cd "$work/unpacked" && python3 -m zipfile -e "$work/bigkern-1.0-py3-none-any.whl" .)
"$sitepatch" --venv "$work/venv" -q edit bigkern >/dev/null 2>&1
# Three hand edits: a body, a decorator, a constant.
sed -i 's/    y = x + 3$/    y = x - 3/' "$site/bigkern/p05/m0105.py"
sed -i 's/^def f1(x):$/@functools.cache\ndef f1(x):/' "$site/bigkern/p07/m0507.py"
sed -i 's/^LIMIT = 1900$/LIMIT = 1/' "$site/bigkern/p00/m1900.py"

cat >"$work/hash_all.py" <<'PY'
import base64, csv, hashlib, os, sys
site = sys.argv[1]
info = os.path.join(site, "bigkern-1.0.dist-info")
changed = []
with open(os.path.join(info, "RECORD"), newline="") as f:
    for path, h, size in csv.reader(f):
        if not h: continue
        with open(os.path.join(site, path), "rb") as g:
            d = base64.urlsafe_b64encode(hashlib.sha256(g.read()).digest()).rstrip(b"=").decode()
        if "sha256=" + d != h: changed.append(path)
print(len(changed))
PY

ms() {  # ms CMD...: milliseconds one run takes
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

found=$("$sitepatch" --venv "$work/venv" --json capture bigkern --dry-run | python3 -c \
  "import json,sys; d=json.load(sys.stdin); print(len(d['captured']), sum(f['edits'] for f in d['captured']), d['checked'], d['hashed'])")
echo "cores: $(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "bigkern: $files files; capture --dry-run finds (files, edits, checked, hashed): $found"
for ((i = 1; i <= rounds; i++)); do
  ms "$sitepatch" --venv "$work/venv" capture bigkern --dry-run >>"$work/capture"
  ms "$sitepatch" --venv "$work/venv" capture bigkern --dry-run --hash-all >>"$work/hashall"
  ms diff -r "$work/unpacked/bigkern" "$site/bigkern" >>"$work/diff"
  ms python3 "$work/hash_all.py" "$site" >>"$work/py"
done
# One real capture: recorded as applied (the history written, RECORD rewritten).
real=$(ms "$sitepatch" --venv "$work/venv" capture bigkern -o "$work/bigkern-local.yaml")
c=$(median <"$work/capture"); h=$(median <"$work/hashall"); d=$(median <"$work/diff"); p=$(median <"$work/py")
echo
echo "| command | median ms | runs |"
echo "| --- | ---: | ---: |"
echo "| sitepatch capture bigkern --dry-run | $c | $rounds |"
echo "| sitepatch capture bigkern --dry-run --hash-all | $h | $rounds |"
echo "| sitepatch capture bigkern (recorded) | $real | 1 |"
echo "| diff -r unpacked wheel vs installed | $d | $rounds |"
echo "| python: hash every file against RECORD | $p | $rounds |"
echo "| capture / diff -r | $(awk -v a="$c" -v b="$d" 'BEGIN {printf "%.2f", a / b}') | |"

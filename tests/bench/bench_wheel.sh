#!/usr/bin/env bash
# sitepatch wheel on a 300-file package (issue 52's goal: under 3 s): 300 modules of about
# 50 KB, one recipe with one replace-body in each, planned and compiled, the wheel written.
# Beside it, in the same rounds, the floor a hand-made pipeline has: a Python script that
# reads the wheel, replaces the 300 bodies by string replacement (no locating, no compile
# check), rehashes RECORD and writes the zip. Medians, and the median per-round ratio.
#
# usage: bench_wheel.sh [ROUNDS]   (default 11)
# Needs: build/sitepatch, python3.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-11}
sitepatch=${SITEPATCH:-$root/build/sitepatch}
work=$(mktemp -d /tmp/sitepatch-bench-wheel-XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import os, sys
work = sys.argv[1]
pkg = os.path.join(work, "src", "bigpkg")
os.makedirs(pkg)
open(os.path.join(pkg, "__init__.py"), "w").close()
edits = []
for m in range(300):
    with open(os.path.join(pkg, "m%03d.py" % m), "w") as f:
        for k in range(400):  # about 50 KB
            f.write("def f%d(x):\n    \"\"\"Adds %d.\"\"\"\n    y = x + %d\n    return y * 2\n\n\n" % (k, k, k))
    edits.append("  - module: bigpkg.m%03d\n    function: f7\n    replace-body: |\n      return x * 7\n" % m)
with open(os.path.join(work, "recipe.yaml"), "w") as f:
    f.write("id: bench-300\nedits:\n" + "".join(edits))
PY
python3 "$root/scripts/build_wheel.py" "$work/src" bigpkg 1.0 "$work" >/dev/null
mkdir -p "$work/out" "$work/hand"
echo "wheel: $(du -h "$work"/bigpkg-1.0-py3-none-any.whl | cut -f1), $(python3 -c 'import sys, zipfile; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))' "$work"/bigpkg-1.0-py3-none-any.whl) members; $(nproc) cores"

cat >"$work/hand.py" <<'PY'
import base64, csv, hashlib, io, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
old = '    """Adds 7."""\n    y = x + 7\n    return y * 2\n'
new = '    """Adds 7."""\n    return x * 7\n'
zin = zipfile.ZipFile(src)
files = {n: zin.read(n) for n in zin.namelist()}
record_name = [n for n in files if n.endswith(".dist-info/RECORD")][0]
for n in list(files):
    if n.startswith("bigpkg/m"):
        files[n] = files[n].decode().replace(old, new, 1).encode()
rows = io.StringIO()
w = csv.writer(rows, lineterminator="\n")
for n, d in files.items():
    if n != record_name:
        w.writerow([n, "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d)])
w.writerow([record_name, "", ""])
files[record_name] = rows.getvalue().encode()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for n, d in files.items():
        z.writestr(n, d)
PY

src=$work/bigpkg-1.0-py3-none-any.whl
python3 "$here/side_by_side.py" "$rounds" "sitepatch wheel" "python zipfile by hand" -- \
  "$sitepatch" -q wheel "$work/recipe.yaml" --from "$src" -o "$work/out" --- \
  python3 "$work/hand.py" "$src" "$work/hand/bigpkg-1.0+hand-py3-none-any.whl"

#!/usr/bin/env python3
"""Builds a wheel from a folder of Python sources with zipfile alone (no PyPI here).

usage: build_wheel.py SRC_DIR NAME VERSION OUT_DIR
Every file under SRC_DIR goes into the wheel at its relative path; the dist-info
gets METADATA, WHEEL and a RECORD with sha256 rows, as pip expects.
"""
import base64
import csv
import hashlib
import io
import os
import re
import sys
import zipfile


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def main() -> None:
    src, name, version, out = sys.argv[1:5]
    norm = re.sub(r"[-_.]+", "_", name)
    dist_info = f"{norm}-{version}.dist-info"
    files = {}
    for folder, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for n in sorted(names):
            path = os.path.join(folder, n)
            with open(path, "rb") as f:
                files[os.path.relpath(path, src).replace(os.sep, "/")] = f.read()
    # The description's "Name:" line is body text, not a header: readers must stop
    # at the blank line (sitepatch's METADATA parser is tested against this).
    files[f"{dist_info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        "Summary: built from a folder by sitepatch's build_wheel.py\n\n"
        "Name: not-this\n").encode()
    files[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: sitepatch-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n").encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for p, d in files.items():
        writer.writerow([p, record_hash(d), len(d)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    files[f"{dist_info}/RECORD"] = record.getvalue().encode()
    os.makedirs(out, exist_ok=True)
    wheel = os.path.join(out, f"{norm}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(p, d)
    print(wheel)


if __name__ == "__main__":
    main()

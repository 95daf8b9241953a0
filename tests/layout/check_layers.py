#!/usr/bin/env python3
"""The house rules a reader of the source can rely on, checked on every test run.

1. Layers: a module includes only modules below it (LAYERS: util at the bottom, cli at
   the top; modules on one level do not include each other). Each src/<module>/ file and
   include/sitepatch/<module>/ header counts for its module; an include is "sitepatch/<m>/..."
   or "<m>/..." (the src-relative form). Generated headers (no folder) and the same module
   are always fine.
2. Size: no source file (src/**/*.cpp, *.hpp, *.py, include/**/*.hpp) over MAX_LINES lines.
3. Test names: no `;` in a TEST_CASE name under tests/ (ctest splits a name there into two
   tests that each match nothing).

Usage: check_layers.py ROOT, or --self-test. Exit 1 listing each breach as
FILE:LINE: what -> why.
"""
import os
import re
import sys
import tempfile

# Lower numbers are lower layers. A module may include any module of a lower number.
LAYERS = {
    "util": 0,
    "recipe": 1,
    "python": 2, "site": 2, "store": 2,
    "host": 3, "audit": 3,
    "explain": 4,
    "engine": 5,
    "cli": 6,
}
MAX_LINES = 600
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
TEST_CASE = re.compile(r'TEST_CASE\(((?:\s*"(?:[^"\\]|\\.)*")+)')


def module_of(rel):
    """The module a file under src/ or include/sitepatch/ belongs to, or None."""
    parts = rel.split(os.sep)
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ["include", "sitepatch"] and len(parts) > 3:
        return parts[2]
    return None


def included_module(path):
    parts = path.split("/")
    if parts[0] == "sitepatch" and len(parts) > 2:
        return parts[1]
    if len(parts) > 1 and parts[0] in LAYERS:
        return parts[0]
    return None


def sources(root):
    for top in ("src", "include"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".cpp", ".hpp", ".h", ".py")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def check(root):
    problems = []
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        count = len(lines) - (1 if lines and lines[-1] == "" else 0)
        if count > MAX_LINES:
            problems.append(f"{rel}:{count}: {count} lines -> more than {MAX_LINES}; split it into files of one concept")
        mine = module_of(rel)
        if mine is None or mine not in LAYERS:
            if mine is not None:
                problems.append(f"{rel}:1: module {mine} -> not in LAYERS of tests/layout/check_layers.py")
            continue
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            theirs = included_module(m.group(1))
            if theirs is None or theirs == mine:
                continue
            if theirs not in LAYERS:
                problems.append(f"{rel}:{number}: {m.group(1)} -> module {theirs} is not in LAYERS")
            elif LAYERS[theirs] >= LAYERS[mine]:
                problems.append(f"{rel}:{number}: {m.group(1)} -> {mine} (layer {LAYERS[mine]}) may not include "
                                f"{theirs} (layer {LAYERS[theirs]})")
    problems += test_names(root)
    return problems


def test_names(root):
    problems = []
    for folder, _, files in os.walk(os.path.join(root, "tests")):
        for name in sorted(files):
            if not name.endswith(".cpp"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for m in TEST_CASE.finditer(text):
                title = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
                if ";" in title:
                    number = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{os.path.relpath(path, root)}:{number}: TEST_CASE name -> has a `;`, "
                                    "where ctest splits it into two tests that match nothing")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def put(rel, text):
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        put("src/site/a.cpp", '#include "sitepatch/util/strings.hpp"\n#include "sitepatch/host/host.hpp"\n')
        put("src/engine/b.cpp", '#include "audit/resolve.hpp"\n#include "engine/x.hpp"\n#include "gen.hpp"\n')
        put("src/audit/c.cpp", '#include "sitepatch/host/host.hpp"\n')  # same layer
        put("include/sitepatch/util/d.hpp", '#include "sitepatch/cli/x.hpp"\n')
        put("src/util/big.cpp", "x\n" * (MAX_LINES + 1))
        put("src/util/fits.cpp", "x\n" * MAX_LINES)
        put("tests/unit/names.cpp", 'TEST_CASE("fine, this one", "[a]") {}\n'
                                    'TEST_CASE("split in two "\n          "by ; here", "[a]") {}\n')
        got = sorted(p.split(" -> ")[0] for p in check(root))
        want = sorted([
            "src/site/a.cpp:2: sitepatch/host/host.hpp",
            "src/audit/c.cpp:1: sitepatch/host/host.hpp",
            "include/sitepatch/util/d.hpp:1: sitepatch/cli/x.hpp",
            f"src/util/big.cpp:{MAX_LINES + 1}: {MAX_LINES + 1} lines",
            "tests/unit/names.cpp:2: TEST_CASE name",
        ])
        if got != want:
            print("self-test failed:\n  got  %s\n  want %s" % (got, want))
            return 1
    print("self-test: the checker finds exactly the breaches it was given")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} breach(es) of the house rules")
        return 1
    print(f"every include goes down a layer; no source file over {MAX_LINES} lines; no test name with a `;`")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

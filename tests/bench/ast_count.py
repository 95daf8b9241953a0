#!/usr/bin/env python3
"""The reference count for the audit benchmark: Python's own `ast` finds every call
written `subprocess.X(...)` or `open(...)` under a folder, and the function each one
belongs to (the innermost enclosing def; calls at module level belong to none).

usage: ast_count.py DIR [SITES_FILE]   (SITES_FILE gets one "rel:line:col" a line)
"""
import ast
import os
import sys
from multiprocessing import Pool


def sites_of(args):
    root, rel = args
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            tree = ast.parse(fh.read(), rel)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return rel, [], False
    out = []

    def visit(node, fn):
        for child in ast.iter_child_nodes(node):
            inner = fn
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = (child.name, child.lineno)
            if isinstance(child, ast.Call):
                f = child.func
                if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "subprocess") or (
                    isinstance(f, ast.Name) and f.id == "open"
                ):
                    out.append((child.lineno, child.col_offset + 1, fn))
            visit(child, inner)

    try:
        visit(tree, None)
    except RecursionError:
        return rel, [], False
    return rel, out, True


def main():
    root = sys.argv[1].rstrip("/")
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for n in sorted(names):
            if n.endswith(".py"):
                files.append(os.path.relpath(os.path.join(folder, n), root))
    sites, functions, parsed = [], set(), 0
    with Pool(os.cpu_count()) as pool:
        for rel, found, ok in pool.imap_unordered(sites_of, [(root, f) for f in files], chunksize=16):
            parsed += ok
            for line, col, fn in found:
                sites.append("%s:%d:%d" % (rel, line, col))
                if fn:
                    functions.add((rel, fn))
    print("files %d parsed %d call_sites %d functions %d" % (len(files), parsed, len(sites), len(functions)))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as fh:
            fh.write("\n".join(sorted(sites)) + "\n")


if __name__ == "__main__":
    main()

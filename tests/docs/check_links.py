#!/usr/bin/env python3
"""Every relative link in the docs resolves, and README.md stays short.

    check_links.py ROOT        checks README.md, ARCHITECTURE.md, SECURITY.md, CHANGELOG.md
                               and docs/**/*.md under ROOT
    check_links.py --self-test checks this script against a tiny tree of its own

A relative markdown link, `[text](path)` or `[text](path#anchor)` (or `(#anchor)` in the
same file), must name a file or folder that exists, and an anchor must be the GitHub
slug of a heading in the target: lowercase, punctuation other than '-' and '_' removed,
each space a '-' (a repeated heading gets -1, -2, ...). Links to http(s) and mailto, and
anything inside a fenced code block or an inline code span, are not links. README.md
must be at most 300 lines. Each broken link is printed as FILE:LINE: link -> reason; the
exit status is 1 when anything is wrong, 0 otherwise. Python 3, standard library only.
"""
import os
import re
import sys
import tempfile
import urllib.parse

README_MAX_LINES = 300
TOP_FILES = ["README.md", "ARCHITECTURE.md", "SECURITY.md", "CHANGELOG.md"]

FENCE = re.compile(r"^ {0,3}(?:[-*+] |\d+[.)] )?\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# An inline link or image: [text](target) or [text](<target> "title").
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)
SCHEMES = ("http://", "https://", "mailto:", "ftp://")


def without_code(text):
    """`text` with fenced blocks and inline code spans blanked (newlines kept, so that
    offsets and line numbers stay), and the set of line numbers inside fences."""
    out, fenced = [], set()
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            fenced.add(number)
            out.append("")
            continue
        if fence is not None:
            fenced.add(number)
            close = FENCE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence) \
                    and line.strip().strip(fence[0]) == "":
                fence = None
            out.append("")
            continue
        out.append(line)
    body = "\n".join(out)
    # Inline code: a run of N backticks up to the next run of exactly N, not across a blank line.
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    body = re.sub(r"(?<!`)(`+)(?!`)(?:(?!\n\s*\n).)*?(?<!`)\1(?!`)", blank, body, flags=re.S)
    return body, fenced


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)                         # inline HTML
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)                        # \w keeps letters, digits, '_'
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        _, fenced = without_code(text)
        seen, found = {}, set()
        for number, line in enumerate(text.split("\n"), 1):
            if number in fenced:
                continue
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check_file(root, rel):
    """Each broken link of ROOT/REL as (line, link, reason)."""
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    body, _ = without_code(text)
    broken = []
    for m in LINK.finditer(body):
        target = m.group(2)
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        line = body.count("\n", 0, m.start()) + 1
        if target.lower().startswith(SCHEMES):
            continue
        if not target:
            broken.append((line, target, "empty link"))
            continue
        where, _, anchor = target.partition("#")
        where = urllib.parse.unquote(where)
        if where.startswith("/"):
            dest = os.path.normpath(os.path.join(root, where.lstrip("/")))
        elif where:
            dest = os.path.normpath(os.path.join(os.path.dirname(path), where))
        else:
            dest = path
        if not os.path.exists(dest):
            broken.append((line, target, f"{os.path.relpath(dest, root)} does not exist"))
            continue
        if not anchor:
            continue
        if os.path.isdir(dest):
            broken.append((line, target, f"{os.path.relpath(dest, root)} is a folder, it has no #{anchor}"))
        elif dest.endswith(".md") and urllib.parse.unquote(anchor) not in anchors(dest):
            broken.append((line, target, f"no heading in {os.path.relpath(dest, root)} has the anchor #{anchor}"))
    return broken


def files_to_check(root):
    out = [f for f in TOP_FILES if os.path.isfile(os.path.join(root, f))]
    docs = os.path.join(root, "docs")
    for folder, dirs, names in os.walk(docs):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".md"):
                out.append(os.path.relpath(os.path.join(folder, name), root))
    return out


def check(root):
    """Every problem under ROOT, one message each."""
    problems = []
    for rel in files_to_check(root):
        for line, link, reason in check_file(root, rel):
            problems.append(f"{rel}:{line}: {link} -> {reason}")
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        with open(readme, "rb") as f:
            lines = f.read().count(b"\n")
        if lines > README_MAX_LINES:
            problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}: "
                            "move the detail to a guide in docs/guide/")
    return problems


def self_test():
    """Builds a tree with good and broken links and anchors; the check must find
    exactly the broken ones, and a README of 301 lines."""
    files = {
        "README.md": "\n".join([
            "# Title",                                               # 1
            "## Install (Debian 12 or 13)",                          # 2
            "[good file](docs/guide/a.md)",                          # 3
            "[good anchor](docs/guide/a.md#the-call-graph)",         # 4
            "[good self](#install-debian-12-or-13)",                 # 5
            "[broken file](docs/guide/missing.md)",                  # 6
            "[broken anchor](docs/guide/a.md#no-such-heading)",      # 7
            "[web](https://example.com/x.md) [mail](mailto:a@b.c)",  # 8
            "```",                                                   # 9
            "[in a fence](nowhere.md)",                              # 10
            "```",                                                   # 11
            "`[in code](nowhere.md)` and `d[k]()`",                  # 12
            "[broken self](#quick-start)",                           # 13
            "",
        ]),
        "docs/guide/a.md": "\n".join([
            "# A",
            "## The call graph",
            "### `explain --run`: prove it",
            "[back](../../README.md#install-debian-12-or-13)",      # 4: good
            "[code anchor](#explain---run-prove-it)",               # 5: good
            "[repeat](#a-1)",                                       # 6: broken: one "A" only
            "",
        ]),
        "CHANGELOG.md": "# Changelog\n\n- [guide](docs/guide/)\n- [gone](docs/guide/b.md#x)\n",
    }
    want = {
        "README.md:6: docs/guide/missing.md -> docs/guide/missing.md does not exist",
        "README.md:7: docs/guide/a.md#no-such-heading -> no heading in docs/guide/a.md has the anchor #no-such-heading",
        "README.md:13: #quick-start -> no heading in README.md has the anchor #quick-start",
        "docs/guide/a.md:6: #a-1 -> no heading in docs/guide/a.md has the anchor #a-1",
        "CHANGELOG.md:4: docs/guide/b.md#x -> docs/guide/b.md does not exist",
    }
    ok = True
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        got = set(check(root))
        if got != want:
            ok = False
            for p in sorted(want - got):
                print(f"self-test: missed {p}")
            for p in sorted(got - want):
                print(f"self-test: wrongly reported {p}")
        # 300 lines pass, 301 fail with the count.
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("x\n" * README_MAX_LINES)
        if any(p.startswith("README.md: ") for p in check(root)):
            ok = False
            print("self-test: a README of 300 lines was refused")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("x\n" * (README_MAX_LINES + 1))
        if f"README.md: 301 lines, more than {README_MAX_LINES}: move the detail to a guide in docs/guide/" \
                not in check(root):
            ok = False
            print("self-test: a README of 301 lines was not refused")
    print("self-test: ok" if ok else "self-test: FAILED")
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = argv[1]
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) in the docs", file=sys.stderr)
        return 1
    print(f"{len(files_to_check(root))} files: every relative link resolves; README.md is at most "
          f"{README_MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Writes docs/guide/rules.md from the shipped rules (recipes/rules/dynamo.yaml): a section
per rule whose heading is its id, the anchor audit prints beside each finding
("[subprocess: docs/guide/rules.md#subprocess]").

usage: rules_doc.py [--check]   (--check: exit 1 when the guide is not what the rules make)
"""
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "recipes", "rules", "dynamo.yaml")
GUIDE = os.path.join(ROOT, "docs", "guide", "rules.md")

# What to do about a finding, by category: the fixes explain --run tries, in the order it
# tries them, said for a person reading one finding.
ADVICE = {
    "process": "Take the value the process computes from somewhere dynamo can read (a "
               "`replace-body` returning what it prints: `return Version(torch.version.cuda)` "
               "instead of running `nvcc --version`), or keep dynamo out of the function "
               "(`add-decorator: torch.compiler.disable`).",
    "file-io": "When the result depends only on arguments dynamo holds as constants (a "
               "tensor's device or dtype), `torch.compiler.assume_constant_result` runs it once "
               "at trace time; otherwise move the read out of the traced path, or "
               "`torch.compiler.disable` the function that does it.",
    "jit-build": "A kernel built on first use: build it ahead of time (the library's "
                 "AOT/prebuilt path), or wrap the op in a custom op (`register-custom-op`) so "
                 "dynamo sees one opaque call; `explain --run` tries the library's own "
                 "custom-op seam first.",
    "native": "Loading a native library at call time: load it at import time, or register "
              "the call as a custom op (`register-custom-op`).",
    "locking": "A lock around a cache fill: fill the cache before compiling (a warm-up call), "
               "or `torch.compiler.disable` the function that takes the lock.",
    "import": "An import inside the traced function: move it to module level "
              "(`ensure-import` plus a `replace` of the inner import), or disable the function.",
    "network": "Network access has no place in a traced function: move it out, or disable the "
               "function.",
    "output": "Printing or logging breaks the graph: guard it with "
              "`torch.compiler.is_compiling()`, or drop it from the hot path.",
    "clock": "Reading the clock gives a constant at trace time: move the timing outside the "
             "compiled function.",
    "timing": "Sleeping in a traced function: move it outside the compiled function.",
    "data-dependent": "Control flow on a tensor's values: `torch.cond`, or compute the value "
                      "before the compiled region.",
}


def render(rules):
    by_category = {}
    for r in rules:
        by_category.setdefault(r["category"], []).append(r)
    out = [
        "# Rules",
        "",
        "What this covers: every rule audit ships with (`recipes/rules/dynamo.yaml`), by category:",
        "what it matches, why dynamo cannot trace it, its severity, the probe `rules --calibrate`",
        "runs, and what to do about a finding. Audit names a rule's section beside each finding",
        "(`[subprocess: docs/guide/rules.md#subprocess]`); a rules file of your own can give its",
        "rules a `doc:` to be named the same way ([Audit](audit.md#rules-are-data)). Generated",
        "from the rules by `scripts/rules_doc.py`; a ctest test holds it to them.",
        "",
        "[README](../../README.md) · [all guides](README.md) · previous: [Audit](audit.md) · next: [Explain](explain.md)",
    ]
    for category in sorted(by_category):
        out += ["", "## " + category, "", ADVICE.get(category, "")]
        for r in by_category[category]:
            out += ["", "### " + r["id"], ""]
            out.append("Matches `%s`: %s. Severity: %s." % (r["match"], r["message"], r.get("severity", "warning")))
            if r.get("probe"):
                out += ["", "Probe: `%s`" % r["probe"]]
    return "\n".join(out).rstrip() + "\n"


def main():
    with open(RULES) as f:
        rules = yaml.safe_load(f)["rules"]
    text = render(rules)
    if sys.argv[1:] == ["--check"]:
        with open(GUIDE) as f:
            if f.read() != text:
                sys.exit("docs/guide/rules.md is not what recipes/rules/dynamo.yaml makes: run scripts/rules_doc.py")
        print("docs/guide/rules.md: %d rules, each with its section" % len(rules))
        return
    with open(GUIDE, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

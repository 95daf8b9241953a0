// Free names: what new code uses that nothing binds. Python's scope rules decide, so
// that plan warns about `torch` without an import and about nothing else.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "python/tree.hpp"
#include "unit/python_support.hpp"

using namespace pytest;
using Names = std::vector<std::string>;

namespace {

// The free names anywhere in `src` (the fixed builtins list unless `builtins` is given).
Names free_in(const std::string& src, const std::vector<std::string>& builtins = {}) {
  Module m(src);
  auto found = m.free_names({{0, src.size()}}, builtins);
  REQUIRE(found);
  Names out;
  for (const auto& f : *found) out.push_back(f.name);
  return out;
}

}  // namespace

TEST_CASE("a name no import, definition or builtin binds is free", "[python][names]") {
  CHECK(free_in("def f(x):\n    return torch.zeros(x)\n") == Names{"torch"});
  CHECK(free_in("import torch\ndef f(x):\n    return torch.zeros(x)\n").empty());
  CHECK(free_in("def f(x):\n    import torch\n    return torch.zeros(x)\n").empty());
  CHECK(free_in("from a import b as torch\ndef f():\n    return torch, len, print, __file__\n").empty());
  // Used twice, reported once, in order of first use.
  CHECK(free_in("def f():\n    np.a(torch)\n    np.b()\n") == Names{"np", "torch"});
}

TEST_CASE("only what the range covers is checked, and a star import makes names unknown", "[python][names]") {
  std::string src = "def f():\n    return a\ndef g():\n    return b\n";
  Module m(src);
  auto found = m.free_names({{src.find("def g"), src.size()}}, {});
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK((*found)[0].name == "b");
  CHECK((*found)[0].offset == src.find("b\n"));
  CHECK_FALSE(Module("from torch import *\ndef f():\n    return zeros\n").free_names({{0, 40}}, {}));
}

TEST_CASE("the environment's builtins list replaces the fixed one", "[python][names]") {
  CHECK(free_in("x = aiter\n", {"len"}) == Names{"aiter"});
  CHECK(free_in("x = my_builtin\n", {"my_builtin"}).empty());
}

TEST_CASE("what binds a name in Python binds it here: no false warnings", "[python][names]") {
  std::string src =
      "import os.path\n"
      "from . import sibling\n"
      "from .x import (y as why)\n"
      "G = 1\n"
      "def setter():\n"
      "    global LATER\n"
      "    LATER = 2\n"
      "def f(a, /, b: int = G, *args, c, d=1, **kw) -> int:\n"
      "    total = sum(v * w for v in args for w in range(v) if v)\n"
      "    pairs = {k: v for k, v in kw.items()}\n"
      "    g = lambda p, q=a: p + q + a\n"
      "    try:\n"
      "        pass\n"
      "    except (OSError, ValueError) as err:\n"
      "        print(err)\n"
      "    with open(b) as fh, open(c) as (x1, x2):\n"
      "        fh.read(); x1, x2\n"
      "    if (n := len(args)) > 1:\n"
      "        print(n)\n"
      "    for i, (j, *rest) in enumerate(args):\n"
      "        print(i, j, rest)\n"
      "    match a:\n"
      "        case {'k': kk, **others}:\n"
      "            print(kk, others)\n"
      "        case os.sep:\n"
      "            pass\n"
      "        case [1, *tail] as whole:\n"
      "            print(tail, whole)\n"
      "        case Point(x=px, y=_) if px > 0:\n"
      "            print(px)\n"
      "        case captured:\n"
      "            print(captured)\n"
      "    del d\n"
      "    later_local += 1\n"
      "    later_local = 0\n"
      "    a.attribute.chain(keyword=1, other=total)\n"
      "    def inner():\n"
      "        nonlocal total\n"
      "        total = pairs\n"
      "        return g, sibling, why, LATER\n"
      "    return inner, f'{a!r:>{b}}'\n"
      "class Point:\n"
      "    x: int = 0\n"
      "    y = x + 1\n"
      "    __match_args__ = ('x', 'y')\n"
      "    squares = [v * v for v in __match_args__ if v]\n"  // the first iterable is the class's
      "    @staticmethod\n"
      "    def m(self) -> 'Point':\n"
      "        return __class__, super(), Point\n"
      "@Point.m\n"
      "def decorated(): pass\n";
  CHECK(free_in(src).empty());
}

TEST_CASE("a class body is not seen from its methods, a comprehension or lambda's own names do not leak",
          "[python][names]") {
  CHECK(free_in("class A:\n    limit = 3\n    def m(self):\n        return limit\n") == Names{"limit"});
  std::string cls = "class A:\n    limit = 3\n    def m(self):\n        return limit, other\n";
  auto found = Module(cls).free_names({{0, cls.size()}}, {});
  REQUIRE((found && found->size() == 2));
  CHECK((*found)[0].class_attribute);  // the warning says to write self.limit
  CHECK_FALSE((*found)[1].class_attribute);
  CHECK(free_in("def f():\n    [v for v in range(3)]\n    return v\n") == Names{"v"});
  CHECK(free_in("class A:\n    N = 3\n    M = 2\n    s = [n for n in range(N) if n < M]\n") == Names{"M"});
  CHECK(free_in("def f():\n    g = lambda p: p\n    return p\n") == Names{"p"});
  CHECK(free_in("def f():\n    try:\n        pass\n    except E as e:\n        pass\n") == Names{"E"});
  CHECK(free_in("def f(x: Tensor) -> Out:\n    y: Local = 1\n    return y\n") == Names{"Tensor", "Out"});
  // Under `from __future__ import annotations` no annotation is evaluated.
  CHECK(free_in("from __future__ import annotations\ndef f(x: Tensor) -> Out:\n    return x\n").empty());
  CHECK(free_in("def f():\n    global G\n    return G\n") == Names{"G"});
  // PEP 695 type parameters are seen by the annotations and the body, methods too.
  CHECK(free_in("def first[T](xs: list[T]) -> T:\n    y: T = xs[0]\n    return T, y\n").empty());
  CHECK(free_in("class Box[T]:\n    def get(self) -> T:\n        return T\n").empty());
}

TEST_CASE("real modules have no free names", "[python][names]") {
  // Installed Debian and standard library modules, read only (their text is parsed in
  // memory; nothing is written there). Each is real code the analysis must not
  // misread: every name they use is bound somewhere Python looks.
  const char* const files[] = {
      "/usr/lib/python3/dist-packages/click/formatting.py",
      "/usr/lib/python3/dist-packages/click/parser.py",
      "/usr/lib/python3/dist-packages/attr/_make.py",
      "/usr/lib/python3/dist-packages/certifi/core.py",
      "/usr/lib/python3.11/argparse.py",
      "/usr/lib/python3.11/json/decoder.py",
      "/usr/lib/python3.11/dataclasses.py",
      "/usr/lib/python3.11/textwrap.py",
      "/usr/lib/python3.11/shutil.py",
  };
  int checked = 0;
  for (const char* path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string src = ss.str();
    Module m(src);
    auto found = m.free_names({{0, src.size()}}, {});
    if (!found) continue;
    ++checked;
    Names names;
    for (const auto& f : *found) names.push_back(f.name);
    INFO(path);
    CHECK(names == Names{});
  }
  CHECK(checked >= 5);  // the test must look at real code to mean anything
}

namespace {

// Every top-level function and method of `src`, as replace-body edits that write the
// function's own body again (after a comment, so that the body does change).
std::vector<Edit> own_bodies(const std::string& src) {
  using namespace sitepatch::python;
  ts::Tree tree(src);
  std::vector<Edit> out;
  std::set<std::string> seen, twice;
  auto add = [&](TSNode fn, const std::string& prefix) {
    std::string name = prefix + std::string(ts::text(src, ts::field(fn, "name")));
    TSNode body = ts::field(fn, "body");
    size_t column = ts_node_start_point(body).column;
    std::string code = "# sitepatch\n";
    std::string_view text = ts::text(src, body);
    bool first = true;
    for (size_t at = 0; at <= text.size();) {
      size_t nl = text.find('\n', at);
      std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
      if (!first && line.size() >= column && line.find_first_not_of(' ') >= column) line.remove_prefix(column);
      code += std::string(line) + "\n";
      first = false;
      if (nl == std::string_view::npos) break;
      at = nl + 1;
    }
    if (!seen.insert(name).second) twice.insert(name);
    out.push_back(edit(Action::replace_body, name, code));
  };
  for (TSNode stmt : ts::named_children(tree.root())) {
    TSNode def = ts::is(stmt, "decorated_definition") ? ts::field(stmt, "definition") : stmt;
    if (ts::is(def, "function_definition")) add(def, "");
    if (!ts::is(def, "class_definition")) continue;
    std::string cls = std::string(ts::text(src, ts::field(def, "name"))) + ".";
    for (TSNode m : ts::named_children(ts::field(def, "body"))) {
      TSNode mdef = ts::is(m, "decorated_definition") ? ts::field(m, "definition") : m;
      if (ts::is(mdef, "function_definition")) add(mdef, cls);
    }
  }
  // A name defined twice (a property's getter and setter) needs `occurrence`: left out.
  std::vector<Edit> unique;
  for (auto& e : out)
    if (!twice.count(e.target)) unique.push_back(e);
  return unique;
}

}  // namespace

TEST_CASE("real functions given their own body back get no warning", "[python][names]") {
  // As plan does it: the edits' changes are the ranges checked in the patched module.
  const char* const files[] = {
      "/usr/lib/python3/dist-packages/click/parser.py",
      "/usr/lib/python3/dist-packages/click/formatting.py",
      "/usr/lib/python3/dist-packages/certifi/core.py",
      "/usr/lib/python3.11/textwrap.py",
      "/usr/lib/python3.11/json/decoder.py",
  };
  int functions = 0;
  for (const char* path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string src = ss.str();
    std::vector<Edit> edits = own_bodies(src);
    std::vector<const Edit*> ptrs;
    for (const auto& e : edits) ptrs.push_back(&e);
    std::vector<EditResult> results;
    std::vector<sitepatch::python::TextChange> changes;
    std::string out = Module(src).apply(ptrs, results, &changes);
    INFO(path);
    for (size_t i = 0; i < results.size(); ++i) {
      INFO(edits[i].target + ": " + results[i].message);
      CHECK(results[i].outcome == Outcome::will_apply);
    }
    std::vector<std::pair<size_t, size_t>> ranges;
    for (const auto& c : changes) ranges.emplace_back(c.new_begin, c.new_end);
    Module patched(out);
    CHECK(patched.syntax_problems().empty());
    auto found = patched.free_names(ranges, {});
    REQUIRE(found);
    Names names;
    for (const auto& f : *found) names.push_back(f.name);
    CHECK(names == Names{});
    functions += int(edits.size());
  }
  CHECK(functions >= 50);
}

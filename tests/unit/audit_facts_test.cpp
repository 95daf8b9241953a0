// Facts of one module: imports (relative ones made absolute), definitions, and each
// name a function calls or uses as a value.
#include <catch2/catch.hpp>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/audit/scan.hpp"

using namespace sitepatch::audit;

namespace {

const Function& fn(const ModuleFacts& m, const std::string& q) {
  for (auto& f : m.functions)
    if (f.qualified == q) return f;
  FAIL("no function " << q);
  throw;
}

std::vector<std::string> refs(const Function& f, Ref::Kind kind) {
  std::vector<std::string> out;
  for (auto& r : f.refs)
    if (r.kind == kind) out.push_back(r.name + (r.on_result ? "()" : "") + "@" + std::to_string(r.line));
  return out;
}

}  // namespace

TEST_CASE("relative imports are made absolute from the module and whether it is a package", "[audit]") {
  CHECK(absolute_module("a.b.c", false, 1, "d") == "a.b.d");
  CHECK(absolute_module("a.b.c", false, 2, "") == "a");
  CHECK(absolute_module("a.b", true, 1, "d") == "a.b.d");
  CHECK(absolute_module("a", false, 2, "x") == "");
  auto m = extract("import os.path\nimport numpy as np\nfrom . import x\nfrom ..y import z as w\nfrom .q import *\n",
                   "pkg.sub.mod", false);
  auto& imp = m.functions[0].imports;
  CHECK(imp.at("os") == "os");
  CHECK(imp.at("np") == "numpy");
  CHECK(imp.at("x") == "pkg.sub.x");
  CHECK(imp.at("w") == "pkg.y.z");
  CHECK(m.stars == std::vector<std::string>{"pkg.sub.q"});
}

TEST_CASE("calls, values, decorators and dynamic calls belong to their innermost function", "[audit]") {
  auto m = extract(
      "import functools\n"                              // 1
      "@functools.lru_cache(maxsize=None)\n"            // 2
      "def f(a, *args, k=g(), **kw):\n"                 // 3
      "    a.b()\n"                                     // 4
      "    table = {'x': helper, 'y': [other]}\n"       // 5
      "    run(callback, key=handler)\n"                // 6
      "    getattr(a, 'x')()(1)\n"                      // 7
      "    def inner():\n"                              // 8
      "        return Path(p).read_text()\n"            // 9
      "    return inner\n"                              // 10
      "class C(Base):\n"                                // 11
      "    def m(self):\n"                              // 12
      "        self.n()\n"                              // 13
      "    @staticmethod\n"                             // 14
      "    def s(x):\n"                                 // 15
      "        pass\n"                                  // 16
      "cached = functools.partial(f, 1)\n",             // 17
      "m", false);
  const Function& f = fn(m, "f");
  CHECK(f.line == 3);
  CHECK(f.locals == std::vector<std::string>{"a", "args", "k", "kw", "table"});
  CHECK(refs(f, Ref::call) == std::vector<std::string>{"a.b@4", "run@6", "a.x@7", "getattr@7"});
  CHECK(refs(f, Ref::value) == std::vector<std::string>{"helper@5", "other@5", "callback@6", "handler@6", "a@7", "inner@10"});
  CHECK(refs(f, Ref::decorator) == std::vector<std::string>{"functools.lru_cache@2"});
  CHECK(refs(f, Ref::dynamic) == std::vector<std::string>{"getattr(a, 'x')()@7"});
  // A default value runs where the def is: at the top level.
  CHECK(refs(m.functions[0], Ref::call) == std::vector<std::string>{"functools.lru_cache@2", "g@3", "functools.partial@17"});
  CHECK(refs(fn(m, "f.inner"), Ref::call) == std::vector<std::string>{"Path.read_text()@9", "Path@9"});
  CHECK(fn(m, "C.m").self_name == "self");
  CHECK(fn(m, "C.s").self_name.empty());
  CHECK(m.classes.at(0).bases == std::vector<std::string>{"Base"});
  CHECK(m.aliases.at("cached") == "f");
}

TEST_CASE("scan resolves a called name through the module's imports", "[audit]") {
  RuleSet rules;
  rules.add(builtin_rules());
  auto m = extract(
      "from subprocess import Popen as P, check_output\n"  // 1
      "import subprocess as sp\n"                          // 2
      "from pathlib import Path\n"                         // 3
      "from io import open\n"                              // 4
      "def a():\n"                                         // 5
      "    P(['ls'])\n"                                    // 6
      "    sp.run(['ls'])\n"                               // 7
      "    Path('x').exists()\n"                           // 8
      "def b(subprocess):\n"                               // 9
      "    subprocess.wait()\n"                            // 10
      "    open('f')\n"                                    // 11
      "check_output(['ls'])\n",                            // 12
      "m", false);
  std::vector<std::string> got;
  for (auto& f : scan(m, rules)) got.push_back(f.function + "@" + std::to_string(f.line) + " " + f.operation);
  CHECK(got == std::vector<std::string>{"a@6 subprocess.Popen", "a@7 subprocess.run", "a@8 pathlib.Path.exists",
                                        "b@11 io.open", "@12 subprocess.check_output"});
}

// The walk over modules held in memory (no environment): how names resolve across
// modules, what counts as called, depth, and the errors for a wrong entry.
#include <catch2/catch.hpp>

#include <map>

#include "sitepatch/audit/graph.hpp"
#include "sitepatch/util/error.hpp"

using namespace sitepatch::audit;

namespace {

// Modules by name, as source text; every load() call is one wave.
struct MemorySource : ModuleSource {
  std::map<std::string, std::string> files;  // "pkg/__init__.py" -> text
  int waves = 0;
  std::vector<std::optional<ModuleFacts>> load(const std::vector<std::string>& modules) override {
    ++waves;
    std::vector<std::optional<ModuleFacts>> out;
    for (auto& m : modules) {
      std::string rel;
      for (char c : m) rel += c == '.' ? '/' : c;
      if (files.count(rel + "/__init__.py")) {
        out.push_back(extract(files[rel + "/__init__.py"], m, true));
        out.back()->file = rel + "/__init__.py";
      } else if (files.count(rel + ".py")) {
        out.push_back(extract(files[rel + ".py"], m, false));
        out.back()->file = rel + ".py";
      } else {
        out.push_back(std::nullopt);
      }
    }
    return out;
  }
  std::vector<std::string> siblings(const std::string&) override { return {"pkg.api", "pkg.core"}; }
};

RuleSet dynamo() {
  RuleSet r;
  r.add(builtin_rules());
  return r;
}

std::vector<std::string> chains(const CallGraph& g) {
  std::vector<std::string> out;
  for (auto& c : g.chains) {
    std::string s;
    for (auto& st : c.steps) s += st.name() + ":" + std::to_string(st.line) + " > ";
    out.push_back(s + c.operation);
  }
  return out;
}

}  // namespace

TEST_CASE("names resolve through star re-exports, aliases, super() and returned functions", "[audit]") {
  MemorySource src;
  src.files["pkg/__init__.py"] = "from .core import *\n";
  src.files["pkg/core.py"] =
      "import functools, time\n"
      "class Base:\n"
      "    def setup(self):\n"
      "        time.sleep(1)\n"
      "class Child(Base):\n"
      "    def setup(self):\n"
      "        super().setup()\n"
      "class Made:\n"
      "    def __new__(cls):\n"
      "        return object.__new__(cls)\n"
      "def slow():\n"
      "    Made()\n"
      "    Child().setup()\n"
      "fast = functools.partial(slow)\n"
      "def pick():\n"
      "    return slow\n";
  src.files["pkg/api.py"] =
      "import pkg\n"
      "def entry():\n"
      "    pkg.fast()\n"
      "    pkg.core.pick()\n";
  auto g = walk(src, dynamo(), {"pkg.api", "entry", 0});
  CHECK(chains(g) == std::vector<std::string>{
                         "pkg.api:entry:3 > pkg.core:slow:13 > pkg.core:Child.setup:7 > pkg.core:Base.setup:4 > time.sleep"});
  CHECK(g.functions == 6);  // entry, slow, pick, Made.__new__, Child.setup, Base.setup
  CHECK(g.unresolved.empty());
  CHECK(src.waves <= 4);

  // --depth 3: the chain needs four calls.
  CHECK(walk(src, dynamo(), {"pkg.api", "entry", 3}).chains.empty());
  CHECK(walk(src, dynamo(), {"pkg.api", "entry", 4}).chains.size() == 1);
}

TEST_CASE("a wrong entry names what is missing and what is near", "[audit]") {
  MemorySource src;
  src.files["pkg/__init__.py"] = "";
  src.files["pkg/api.py"] = "def entry():\n    pass\ndef entries():\n    pass\nload = make()\nclass K:\n    pass\n";
  CHECK_THROWS_WITH(walk(src, dynamo(), {"pkg.apj", "entry", 0}),
                    "module `pkg.apj` not found in the environment; did you mean pkg.api?");
  CHECK_THROWS_WITH(walk(src, dynamo(), {"pkg.api", "entyr", 0}),
                    "function `entyr` is not defined in module pkg.api (pkg/api.py); did you mean entry?");
  CHECK_THROWS_WITH(walk(src, dynamo(), {"pkg.api", "load", 0}),
                    "`load` in module pkg.api (pkg/api.py) is a variable, not a function defined with def");
  CHECK_THROWS_WITH(walk(src, dynamo(), {"pkg.api", "K", 0}),
                    "`K` in module pkg.api (pkg/api.py) is a class; name one of its methods (K.__init__, ...)");
}

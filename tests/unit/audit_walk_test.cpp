// The walk over modules held in memory (no environment): how names resolve across
// modules, what counts as called, depth, and the errors for a wrong entry.
#include <catch2/catch.hpp>

#include "audit_support.hpp"
#include "sitepatch/util/error.hpp"

using namespace sitepatch::audit;

using namespace auditsupport;

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
  CHECK(unresolved(g) == std::vector<std::string>{});
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

TEST_CASE("a function annotated to return type[X]: a static method called on what it returns is X's", "[audit]") {
  MemorySource src;
  src.files["pkg/__init__.py"] = "";
  src.files["pkg/m.py"] =
      "import subprocess\n"
      "from typing import Optional, Type\n"
      "class Backend:\n"
      "    @staticmethod\n"
      "    def probe():\n"
      "        subprocess.run(['nvidia-smi'])\n"
      "def backend() -> type[Backend]:\n"
      "    return Backend\n"
      "def maybe() -> Optional[Type[Backend]]:\n"
      "    return None\n"
      "def f():\n"
      "    backend().probe()\n"  // 12
      "    maybe().probe()\n"
      "class Opener:\n"
      "    def __init__(self, p):\n"
      "        open(p)\n"  // 16
      "def g(p):\n"
      "    container: type[Opener] = Opener\n"  // a local annotated type[X]: calling it makes an X
      "    return container(p)\n";  // 19
  auto g = walk(src, dynamo(), {"pkg.m", "f", 0});
  CHECK(chains(g) == std::vector<std::string>{"pkg.m:f:12 > pkg.m:Backend.probe:6 > subprocess.run"});
  // maybe() returns None, whatever its annotation says: no method of it is known.
  CHECK(unresolved(g) == std::vector<std::string>{"pkg/m.py:13 pkg.m:f maybe().probe (what maybe() returns is not known)"});
  auto local = walk(src, dynamo(), {"pkg.m", "g", 0});
  CHECK(chains(local) == std::vector<std::string>{"pkg.m:g:19 > pkg.m:Opener.__init__:16 > open"});
  CHECK(unresolved(local) == std::vector<std::string>{});
}

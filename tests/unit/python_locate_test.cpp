// Finding a target by qualified name: methods, nested functions and classes, decorated
// and async definitions, duplicates, wrong kinds and near misses.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

namespace {

const std::string kNested =
    "import functools\n"                 // 1
    "\n"                                 // 2
    "class Outer:\n"                     // 3
    "    LIMIT = 4\n"                    // 4
    "    class Inner:\n"                 // 5
    "        @functools.cache\n"         // 6
    "        def method(self):\n"        // 7
    "            return 1\n"             // 8
    "\n"                                 // 9
    "    async def run(self):\n"         // 10
    "        def helper():\n"            // 11
    "            local = 2\n"            // 12
    "            return local\n"         // 13
    "        return helper()\n"          // 14
    "\n"                                 // 15
    "def outer():\n"                     // 16
    "    def inner():\n"                 // 17
    "        pass\n"                     // 18
    "    return inner\n"                 // 19
    "\n"                                 // 20
    "VERSION: str = '1'\n"               // 21
    "a = b = 3\n";                       // 22

}  // namespace

TEST_CASE("definitions lists functions, classes and variables in source order", "[python]") {
  Module m(kNested);
  std::vector<std::string> got;
  for (const auto& d : m.definitions())
    got.push_back(d.qualified + "@" + std::to_string(d.line) + ":" +
                  (d.kind == TargetKind::function ? "f" : d.kind == TargetKind::class_ ? "c" : "v"));
  CHECK(got == std::vector<std::string>{
                   "Outer@3:c", "Outer.LIMIT@4:v", "Outer.Inner@5:c", "Outer.Inner.method@7:f",
                   "Outer.run@10:f", "Outer.run.helper@11:f", "outer@16:f", "outer.inner@17:f",
                   "VERSION@21:v", "a@22:v", "b@22:v"});
  CHECK(m.defines("Outer.run.helper"));
  CHECK_FALSE(m.defines("Outer.run.helper.local"));
}

TEST_CASE("a method of a nested class, a nested function, an async method", "[python]") {
  std::vector<Edit> edits{edit(Action::replace_body, "Outer.Inner.method", "return 2"),
                          edit(Action::prepend_body, "Outer.run.helper", "print('h')"),
                          edit(Action::add_decorator, "Outer.run", "traced"),
                          edit(Action::replace_body, "outer.inner", "return None")};
  Run r = run(kNested, edits);
  CHECK(r.results[0].line == 7);
  CHECK(r.results[2].line == 10);
  CHECK(r.out ==
        "import functools\n"
        "\n"
        "class Outer:\n"
        "    LIMIT = 4\n"
        "    class Inner:\n"
        "        @functools.cache\n"
        "        def method(self):\n"
        "            return 2\n"
        "\n"
        "    @traced\n"
        "    async def run(self):\n"
        "        def helper():\n"
        "            print('h')\n"
        "            local = 2\n"
        "            return local\n"
        "        return helper()\n"
        "\n"
        "def outer():\n"
        "    def inner():\n"
        "        return None\n"
        "    return inner\n"
        "\n"
        "VERSION: str = '1'\n"
        "a = b = 3\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("a name defined in if/else is ambiguous until `occurrence` picks one", "[python]") {
  std::string src =
      "import sys\n"
      "\n"
      "if sys.platform == 'win32':\n"
      "    def get_x():\n"
      "        return 1\n"
      "else:\n"
      "    @cache\n"
      "    def get_x():\n"
      "        return 2\n";
  Edit e = edit(Action::replace_body, "get_x", "return 3");
  Run r = run(src, {e});
  CHECK(r.results[0].failure == Failure::ambiguous);
  CHECK(r.results[0].lines == std::vector<int>{4, 8});
  CHECK(r.results[0].message == "get_x is defined 2 times (lines 4, 8): add `occurrence: N` to pick one");
  CHECK(r.out == src);

  e.occurrence = 2;
  r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 8);
  CHECK(r.out ==
        "import sys\n"
        "\n"
        "if sys.platform == 'win32':\n"
        "    def get_x():\n"
        "        return 1\n"
        "else:\n"
        "    @cache\n"
        "    def get_x():\n"
        "        return 3\n");
  CHECK(idempotent(r.out, {e}));

  e.occurrence = 3;
  r = run(src, {e});
  CHECK(r.results[0].failure == Failure::ambiguous);
  CHECK(r.results[0].message == "get_x is defined 2 times (lines 4, 8): there is no occurrence 3");
}

TEST_CASE("names defined in try/except/finally and with blocks count at module level", "[python]") {
  std::string src =
      "try:\n"
      "    from fast import speed\n"
      "    HAVE_FAST = True\n"
      "except ImportError:\n"
      "    HAVE_FAST = False\n"
      "finally:\n"
      "    def cleanup():\n"
      "        pass\n"
      "with lock:\n"
      "    LIMIT = 1\n";
  Edit e = edit(Action::set_value, "HAVE_FAST", "True", TargetKind::variable);
  Run r = run(src, {e});
  CHECK(r.results[0].failure == Failure::ambiguous);
  CHECK(r.results[0].message == "HAVE_FAST is defined 2 times (lines 3, 5): add `occurrence: N` to pick one");
  Module m(src);
  CHECK(m.defines("cleanup"));
  CHECK(m.defines("LIMIT"));
  e.occurrence = 2;
  r = run(src, {e});
  CHECK(r.out ==
        "try:\n"
        "    from fast import speed\n"
        "    HAVE_FAST = True\n"
        "except ImportError:\n"
        "    HAVE_FAST = True\n"
        "finally:\n"
        "    def cleanup():\n"
        "        pass\n"
        "with lock:\n"
        "    LIMIT = 1\n");
}

TEST_CASE("occurrence beyond a single definition names the count", "[python]") {
  Edit e = edit(Action::replace_body, "outer", "pass");
  e.occurrence = 2;
  Run r = run(kNested, {e});
  CHECK(r.results[0].message == "outer is defined 1 time (line 16): there is no occurrence 2");
}

TEST_CASE("an unknown name fails with the nearest names", "[python]") {
  std::string src =
      "def get_cuda_version():\n    pass\n"
      "def get_cudnn_version():\n    pass\n"
      "def unrelated_thing():\n    pass\n";
  Run r = run(src, {edit(Action::replace_body, "get_cuda_versoin", "pass")});
  CHECK(r.results[0].failure == Failure::not_found);
  CHECK(r.results[0].message == "function get_cuda_versoin is not defined");
  CHECK(r.results[0].nearest == std::vector<std::string>{"get_cuda_version", "get_cudnn_version"});
  CHECK(r.results[0].line == 0);
}

TEST_CASE("a target of the wrong kind is refused", "[python]") {
  Run r = run(kNested, {edit(Action::replace_body, "Outer", "pass")});
  CHECK(r.results[0].failure == Failure::invalid);
  CHECK(r.results[0].message == "Outer is a class, not a function");
  CHECK(r.results[0].line == 3);
  r = run(kNested, {edit(Action::set_value, "outer", "1", TargetKind::variable)});
  CHECK(r.results[0].message == "outer is a function, not a variable");
}

TEST_CASE("a located target reports its text before the edit, decorators included", "[python]") {
  std::string src = "import x\n\n@deco\ndef f(a):\n    return a\n\n\ndef g():\n    pass\n";
  Module m(src);
  std::vector<Edit> edits{edit(Action::replace_body, "f", "return 1\n")};
  std::vector<const Edit*> ptrs{&edits[0]};
  std::vector<EditResult> results;
  m.apply(ptrs, results);
  REQUIRE(results[0].outcome == Outcome::will_apply);
  CHECK(results[0].original == "@deco\ndef f(a):\n    return a");
}

TEST_CASE("@overload signatures beside one implementation are not more definitions", "[python]") {
  std::string src =
      "from typing import overload\n"
      "\n"
      "@overload\n"
      "def f(x: int) -> int: ...\n"
      "@typing.overload\n"
      "def f(x: str) -> str: ...\n"
      "def f(x):\n"
      "    return x\n";
  Edit e = edit(Action::replace_body, "f", "return 0\n");
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 7);
  CHECK(r.out.find("def f(x):\n    return 0\n") != std::string::npos);
  // Two implementations are still two.
  r = run(src + "def f(y):\n    return y\n", {e});
  CHECK(r.results[0].outcome == Outcome::failed);
  CHECK(r.results[0].message.find("f is defined 4 times") != std::string::npos);
}

// add-decorator (outermost or innermost) and remove-decorator, on functions and classes.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

TEST_CASE("add-decorator goes above the existing decorators by default", "[python]") {
  std::string src =
      "import functools\n"
      "\n"
      "@functools.cache\n"
      "def f():\n"
      "    return 1\n";
  std::vector<Edit> edits{edit(Action::add_decorator, "f", "torch.compiler.disable\n")};
  Run r = run(src, edits);
  CHECK(r.results[0].line == 4);
  CHECK(r.out ==
        "import functools\n"
        "\n"
        "@torch.compiler.disable\n"
        "@functools.cache\n"
        "def f():\n"
        "    return 1\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("add-decorator innermost goes right above the def line", "[python]") {
  std::string src =
      "class A:\n"
      "    @property\n"
      "    def x(self):\n"
      "        return 1\n";
  Edit e = edit(Action::add_decorator, "A.x", "@functools.lru_cache(maxsize=None)");
  e.innermost = true;
  Run r = run(src, {e});
  CHECK(r.out ==
        "class A:\n"
        "    @property\n"
        "    @functools.lru_cache(maxsize=None)\n"
        "    def x(self):\n"
        "        return 1\n");
  CHECK(idempotent(r.out, {e}));
}

TEST_CASE("add-decorator on an undecorated async def and on a class", "[python]") {
  std::string src =
      "async def fetch():\n"
      "    pass\n"
      "\n"
      "class Config:\n"
      "    pass\n";
  std::vector<Edit> edits{edit(Action::add_decorator, "fetch", "traced"),
                          edit(Action::add_decorator, "Config", "dataclasses.dataclass", TargetKind::class_)};
  Run r = run(src, edits);
  CHECK(r.results[1].line == 4);
  CHECK(r.out ==
        "@traced\n"
        "async def fetch():\n"
        "    pass\n"
        "\n"
        "@dataclasses.dataclass\n"
        "class Config:\n"
        "    pass\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("remove-decorator matches the expression or the called function", "[python]") {
  std::string src =
      "@functools.cache()\n"
      "@other\n"
      "def f():\n"
      "    pass\n"
      "\n"
      "@functools.cache\n"
      "def g():\n"
      "    pass\n";
  std::vector<Edit> edits{edit(Action::remove_decorator, "f", "functools.cache"),
                          edit(Action::remove_decorator, "g", "functools.cache")};
  Run r = run(src, edits);
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "@other\n"
        "def f():\n"
        "    pass\n"
        "\n"
        "def g():\n"
        "    pass\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("remove-decorator of an absent decorator is already applied", "[python]") {
  std::string src = "def f():\n    pass\n";
  Run r = run(src, {edit(Action::remove_decorator, "f", "functools.cache")});
  CHECK(r.results[0].outcome == Outcome::already_applied);
  CHECK(r.out == src);
}

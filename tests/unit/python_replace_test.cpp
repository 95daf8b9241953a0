// replace-function, replace (`old` -> `new` inside the target) and set-value.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

TEST_CASE("replace-function replaces the whole definition, decorators included", "[python]") {
  std::string src =
      "class A:\n"
      "    @staticmethod\n"
      "    def make():\n"
      "        return A()\n"
      "\n"
      "    def keep(self):\n"
      "        pass\n";
  std::vector<Edit> edits{edit(Action::replace_function, "A.make",
                               "@classmethod\ndef make(cls):\n    return cls()\n")};
  Run r = run(src, edits);
  CHECK(r.results[0].line == 3);
  CHECK(r.out ==
        "class A:\n"
        "    @classmethod\n"
        "    def make(cls):\n"
        "        return cls()\n"
        "\n"
        "    def keep(self):\n"
        "        pass\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("replace changes `old` to `new` only inside the target", "[python]") {
  std::string src =
      "def a():\n"
      "    return os.getenv('X')\n"
      "\n"
      "def b():\n"
      "    v = os.getenv('X')\n"
      "    return os.getenv('X') or v\n";
  Edit e = edit(Action::replace, "b");
  e.old_text = "os.getenv('X')";
  e.new_text = "os.environ.get('X', '')";
  e.count = 2;
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "def a():\n"
        "    return os.getenv('X')\n"
        "\n"
        "def b():\n"
        "    v = os.environ.get('X', '')\n"
        "    return os.environ.get('X', '') or v\n");
  CHECK(idempotent(r.out, {e}));
}

TEST_CASE("replace fails when `old` is found a different number of times", "[python]") {
  std::string src = "def get_x():\n    x = 1\n    x = x + 1\n    return x\n";
  Edit e = edit(Action::replace, "get_x");
  e.old_text = "x";
  e.new_text = "y";
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::failed);
  CHECK(r.results[0].failure == Failure::mismatch);
  // `x` inside `get_x` is no match: a match begins and ends where tokens do.
  CHECK(r.results[0].message == "`old` matched 4 times in get_x, expected 1");
  CHECK(r.out == src);

  e.old_text = "nothing";
  r = run(src, {e});
  CHECK(r.results[0].message == "`old` matched 0 times in get_x, expected 1");
}

TEST_CASE("replace whose `new` contains `old` is still idempotent", "[python]") {
  std::string src = "def f():\n    return timeout\n";
  Edit e = edit(Action::replace, "f");
  e.old_text = "timeout";
  e.new_text = "timeout * 2";
  Run r = run(src, {e});
  CHECK(r.out == "def f():\n    return timeout * 2\n");
  CHECK(idempotent(r.out, {e}));
}

TEST_CASE("replace whose `old` is missing fails even where `new` occurs in the function", "[python]") {
  // Not "already applied": `new` was there before any apply, and `old` was never found.
  std::string src = "def f(x):\n    y = x * 2\n    return x * 2\n";
  Edit e = edit(Action::replace, "f");
  e.old_text = "x + 2";
  e.new_text = "x * 2";
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::failed);
  CHECK(r.results[0].message == "`old` matched 0 times in f, expected 1");
  // Where `new` stands as often as the edit would put it and `old` is gone, it is applied.
  src = "def f(x):\n    return x * 2\n";
  r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::already_applied);
}

TEST_CASE("replace that deletes all a line holds takes its indentation and its end too", "[python]") {
  std::string src = "def f(x):\n    print(x)\n    return x\n";
  Edit e = edit(Action::replace, "f");
  e.old_text = "print(x)";
  e.new_text = "";
  Run r = run(src, {e});
  CHECK(r.out == "def f(x):\n    return x\n");
  CHECK(idempotent(r.out, {e}));
  // Text that shares its line with other code goes alone.
  src = "def f(x):\n    y = x; print(x)\n    return y\n";
  r = run(src, {e});
  CHECK(r.out == "def f(x):\n    y = x; \n    return y\n");
}

TEST_CASE("set-value replaces a module-level and a class-level right-hand side", "[python]") {
  std::string src =
      "TIMEOUT: int = 30\n"
      "\n"
      "class Settings:\n"
      "    retries = 3\n"
      "    names = [\n"
      "        'a',\n"
      "    ]\n";
  std::vector<Edit> edits{edit(Action::set_value, "TIMEOUT", "120", TargetKind::variable),
                          edit(Action::set_value, "Settings.retries", "5\n", TargetKind::variable),
                          edit(Action::set_value, "Settings.names", "[\n    'b',\n    'c',\n]\n",
                               TargetKind::variable)};
  Run r = run(src, edits);
  CHECK(r.results[1].line == 4);
  CHECK(r.out ==
        "TIMEOUT: int = 120\n"
        "\n"
        "class Settings:\n"
        "    retries = 5\n"
        "    names = [\n"
        "        'b',\n"
        "        'c',\n"
        "    ]\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("set-value on a bare annotation adds the value", "[python]") {
  std::string src = "class A:\n    x: int\n";
  std::vector<Edit> edits{edit(Action::set_value, "A.x", "0", TargetKind::variable)};
  Run r = run(src, edits);
  CHECK(r.out == "class A:\n    x: int = 0\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("set-value on a function is refused", "[python]") {
  Run r = run("def f():\n    pass\n", {edit(Action::set_value, "f", "1")});
  CHECK(r.results[0].failure == Failure::invalid);
  CHECK(r.results[0].message == "f is a function: set-value needs a variable");
}

TEST_CASE("insert-after puts new definitions after the target, once", "[python]") {
  std::string src =
      "def probe():\n"
      "    return 1\n"
      "\n"
      "\n"
      "def other():\n"
      "    pass\n";
  std::vector<Edit> edits{edit(Action::insert_after, "probe", "def _helper():\n    return 2\n")};
  Run r = run(src, edits);
  CHECK(r.results[0].outcome == sitepatch::python::Outcome::will_apply);
  CHECK(r.out ==
        "def probe():\n"
        "    return 1\n"
        "\n"
        "\n"
        "def _helper():\n"
        "    return 2\n"
        "\n"
        "\n"
        "def other():\n"
        "    pass\n");
  // Applying it again finds the helper already right after the target.
  CHECK(idempotent(r.out, edits));
  // Elsewhere in the file is not "after the target": it is inserted.
  Run moved = run("def _helper():\n    return 2\n\n\ndef probe():\n    return 1\n\n\ndef other():\n    pass\n", edits);
  CHECK(moved.out.find("def probe():\n    return 1\n\n\ndef _helper():\n    return 2\n") != std::string::npos);
  Run empty = run(src, {edit(Action::insert_after, "probe", "  \n")});
  CHECK(empty.results[0].outcome == sitepatch::python::Outcome::failed);
  CHECK(empty.results[0].message == "insert-after needs `code`");
}

TEST_CASE("replace with no target works on the whole module, its line the first match", "[python]") {
  std::string src =
      "import os\n"
      "\n"
      "TIMEOUT = 30\n"
      "\n"
      "\n"
      "def f():\n"
      "    return TIMEOUT\n"
      "\n"
      "\n"
      "print('loaded')\n";
  Edit e = edit(Action::replace, "");
  e.old_text = "print('loaded')";
  e.new_text = "print('loaded, patched')";
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 10);
  CHECK(r.out.substr(r.out.rfind("print")) == "print('loaded, patched')\n");
  CHECK(idempotent(r.out, {e}));
  // Found more than `count` times anywhere in the module: named as the module.
  Edit twice = edit(Action::replace, "");
  twice.old_text = "TIMEOUT";
  twice.new_text = "LIMIT";
  Run t = run(src, {twice});
  CHECK(t.results[0].outcome == Outcome::failed);
  CHECK(t.results[0].message == "`old` matched 2 times in the module, expected 1");
}

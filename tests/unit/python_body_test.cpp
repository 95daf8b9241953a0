// replace-body and prepend-body: docstrings kept, indentation followed, one-line bodies
// opened into blocks, and a second apply reports "already applied".
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

TEST_CASE("replace-body replaces the statements and keeps the docstring", "[python]") {
  std::string src =
      "import os\n"
      "\n"
      "def get_x(a):\n"
      "    \"\"\"Return x.\"\"\"\n"
      "    y = a + 1\n"
      "    return y\n"
      "\n"
      "def other():\n"
      "    pass\n";
  std::vector<Edit> edits{edit(Action::replace_body, "get_x", "if a:\n    return 1\nreturn 2\n")};
  Run r = run(src, edits);
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 3);
  CHECK(r.out ==
        "import os\n"
        "\n"
        "def get_x(a):\n"
        "    \"\"\"Return x.\"\"\"\n"
        "    if a:\n"
        "        return 1\n"
        "    return 2\n"
        "\n"
        "def other():\n"
        "    pass\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("replace-body keeps the blank line between the docstring and the body", "[python]") {
  // The code has no leading blank line to give (reindenting drops it): the file's stays,
  // so capture's replace-body of such a method gives the edited bytes back.
  std::string src = "class A:\n    def f(self):\n        \"\"\"Doc.\"\"\"\n\n        x = 1\n        return x\n";
  std::vector<Edit> edits{edit(Action::replace_body, "A.f", "\nreturn 2\n")};
  Run r = run(src, edits);
  CHECK(r.out == "class A:\n    def f(self):\n        \"\"\"Doc.\"\"\"\n\n        return 2\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("replace-body without a docstring replaces comments inside the body too", "[python]") {
  std::string src =
      "def f():\n"
      "    # old\n"
      "    return 1\n"
      "x = 1\n";
  std::vector<Edit> edits{edit(Action::replace_body, "f", "return 2")};
  Run r = run(src, edits);
  CHECK(r.out == "def f():\n    return 2\nx = 1\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("prepend-body inserts after the docstring", "[python]") {
  std::string src =
      "class A:\n"
      "    def m(self):\n"
      "        '''Doc.'''\n"
      "        return self.x\n";
  std::vector<Edit> edits{edit(Action::prepend_body, "A.m", "if self.x is None:\n    self.x = 0\n")};
  Run r = run(src, edits);
  CHECK(r.results[0].line == 2);
  CHECK(r.out ==
        "class A:\n"
        "    def m(self):\n"
        "        '''Doc.'''\n"
        "        if self.x is None:\n"
        "            self.x = 0\n"
        "        return self.x\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("prepend-body without a docstring inserts at the top of the body", "[python]") {
  std::string src = "def f(x):\n    return x\n";
  std::vector<Edit> edits{edit(Action::prepend_body, "f", "x = int(x)\n")};
  Run r = run(src, edits);
  CHECK(r.out == "def f(x):\n    x = int(x)\n    return x\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("a one-line body becomes a block at def indent plus the file's unit", "[python]") {
  std::string src =
      "class A:\n"
      "  def f(self): return 1\n"
      "  def g(self): return 2\n";
  std::vector<Edit> edits{edit(Action::replace_body, "A.f", "import math\nreturn math.pi\n"),
                          edit(Action::prepend_body, "A.g", "print('g')")};
  Run r = run(src, edits);
  CHECK(r.out ==
        "class A:\n"
        "  def f(self):\n"
        "    import math\n"
        "    return math.pi\n"
        "  def g(self):\n"
        "    print('g')\n"
        "    return 2\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("a one-line body that already is the code is already applied", "[python]") {
  std::string src = "def f(): return 1\n";
  Run r = run(src, {edit(Action::replace_body, "f", "return 1\n")});
  CHECK(r.results[0].outcome == Outcome::already_applied);
  CHECK(r.out == src);
}

TEST_CASE("replace-body of a body that is only a docstring adds the code", "[python]") {
  std::string src = "def f():\n    \"\"\"Doc.\"\"\"\n\nx = 1";
  std::vector<Edit> edits{edit(Action::replace_body, "f", "return 0")};
  Run r = run(src, edits);
  CHECK(r.out == "def f():\n    \"\"\"Doc.\"\"\"\n    return 0\n\nx = 1");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("replace-body at the end of a file without a final newline keeps it so", "[python]") {
  std::string src = "def f():\n    return 1";
  std::vector<Edit> edits{edit(Action::replace_body, "f", "return 2\n")};
  Run r = run(src, edits);
  CHECK(r.out == "def f():\n    return 2");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("replace-body on a variable is refused", "[python]") {
  Run r = run("x = 1\n", {edit(Action::replace_body, "x", "pass", TargetKind::variable)});
  CHECK(r.results[0].failure == Failure::invalid);
  CHECK(r.results[0].message == "x is a variable: replace-body needs a function or class");
  CHECK(r.out == "x = 1\n");
}

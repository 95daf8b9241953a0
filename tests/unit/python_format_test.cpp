// The file's own format is kept: tabs, 2-space indents, CRLF line endings, a UTF-8 BOM.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

TEST_CASE("a tab-indented file gets one tab per level of the recipe's code", "[python]") {
  std::string src =
      "class A:\n"
      "\tdef f(self):\n"
      "\t\t\"\"\"Doc.\"\"\"\n"
      "\t\treturn 1\n";
  std::vector<Edit> edits{edit(Action::replace_body, "A.f", "if self.x:\n  return 2\nreturn 3\n"),
                          edit(Action::add_decorator, "A.f", "staticmethod")};
  Run r = run(src, edits);
  CHECK(r.out ==
        "class A:\n"
        "\t@staticmethod\n"
        "\tdef f(self):\n"
        "\t\t\"\"\"Doc.\"\"\"\n"
        "\t\tif self.x:\n"
        "\t\t\treturn 2\n"
        "\t\treturn 3\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("a 2-space file gets its own unit for nested code and one-line bodies", "[python]") {
  std::string src =
      "def f():\n"
      "  return 1\n"
      "class B:\n"
      "  def g(self): pass\n";
  std::vector<Edit> edits{edit(Action::replace_body, "f", "for i in range(3):\n    if i:\n        return i\n"),
                          edit(Action::replace_body, "B.g", "return 2")};
  Run r = run(src, edits);
  CHECK(r.out ==
        "def f():\n"
        "  for i in range(3):\n"
        "    if i:\n"
        "      return i\n"
        "class B:\n"
        "  def g(self):\n"
        "    return 2\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("a CRLF file gets CRLF on every inserted line", "[python]") {
  std::string src =
      "import os\r\n"
      "\r\n"
      "@old\r\n"
      "def f():\r\n"
      "    x = 1\r\n"
      "    return x\r\n";
  Edit rep = edit(Action::replace, "f");
  rep.old_text = "x = 1\n    return x\n";
  rep.new_text = "x = 2\n    return x * 2\n";
  std::vector<Edit> edits{rep, edit(Action::add_decorator, "f", "new"),
                          edit(Action::remove_decorator, "f", "old"), import_edit("import sys")};
  Run r = run(src, edits);
  CHECK(r.out ==
        "import os\r\n"
        "import sys\r\n"
        "\r\n"
        "@new\r\n"
        "def f():\r\n"
        "    x = 2\r\n"
        "    return x * 2\r\n");
  CHECK(idempotent(r.out, edits));

  std::vector<Edit> body{edit(Action::replace_body, "f", "a = 1\r\nreturn a\r\n")};
  r = run(src, body);
  CHECK(r.out == "import os\r\n\r\n@old\r\ndef f():\r\n    a = 1\r\n    return a\r\n");
  CHECK(idempotent(r.out, body));
}

TEST_CASE("a UTF-8 BOM is kept and positions still line up", "[python]") {
  std::string src =
      "\xEF\xBB\xBF\"\"\"Doc.\"\"\"\n"
      "def f():\n"
      "    return 1\n";
  std::vector<Edit> edits{edit(Action::replace_body, "f", "return 2"), import_edit("import torch")};
  Run r = run(src, edits);
  CHECK(r.results[0].line == 2);
  CHECK(r.out ==
        "\xEF\xBB\xBF\"\"\"Doc.\"\"\"\n"
        "import torch\n"
        "def f():\n"
        "    return 2\n");
  CHECK(idempotent(r.out, edits));

  Run top = run("\xEF\xBB\xBFx = 1\n", {import_edit("import torch")});
  CHECK(top.out == "\xEF\xBB\xBFimport torch\nx = 1\n");
  CHECK(Module("\xEF\xBB\xBF(1\n").syntax_problems().at(0).line == 1);
}

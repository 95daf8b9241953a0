// Multi-line string literals under re-indentation: their content is data, kept byte for
// byte whatever the target's indentation (spaces or tabs) and whatever the literal's kind.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

TEST_CASE("replace-body keeps a triple-quoted string's continuation lines as written", "[python][literal]") {
  std::string src =
      "class Q:\n"
      "    def sql(self):\n"
      "        return 'old'\n";
  std::vector<Edit> edits{edit(Action::replace_body, "Q.sql",
                               "q = \"\"\"SELECT *\nFROM t  \n  WHERE x\n\n\"\"\"\nreturn q\n")};
  Run r = run(src, edits);
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "class Q:\n"
        "    def sql(self):\n"
        "        q = \"\"\"SELECT *\n"
        "FROM t  \n"
        "  WHERE x\n"
        "\n"
        "\"\"\"\n"
        "        return q\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("every kind of literal keeps its content in a file indented with tabs", "[python][literal]") {
  std::string src =
      "def f():\n"
      "\treturn 0\n";
  std::string code =
      "a = f'''x\n  {1 + 1}\n'''\n"
      "b = b\"\"\"\n    bytes\"\"\"\n"
      "c = rb'''\\d+\n\t\\w'''\n"
      "d = R\"\"\"raw\n    \\n\"\"\"\n"
      "e = 'one \\\n  line'\n"
      "if a:\n"
      "    g = (\"implicit\"\n"
      "         \"concatenation\")\n"
      "return a, b, c, d, e, g\n";
  std::vector<Edit> edits{edit(Action::replace_body, "f", code)};
  Run r = run(src, edits);
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "def f():\n"
        "\ta = f'''x\n"
        "  {1 + 1}\n"
        "'''\n"
        "\tb = b\"\"\"\n"
        "    bytes\"\"\"\n"
        "\tc = rb'''\\d+\n"
        "\t\\w'''\n"
        "\td = R\"\"\"raw\n"
        "    \\n\"\"\"\n"
        "\te = 'one \\\n"
        "  line'\n"
        "\tif a:\n"
        "\t\tg = (\"implicit\"\n"
        "\t\t\t \"concatenation\")\n"  // continuation lines are code: re-indented
        "\treturn a, b, c, d, e, g\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("replace-function and prepend-body keep literals too", "[python][literal]") {
  std::string src =
      "class A:\n"
      "    def f(self):\n"
      "        return 1\n"
      "    def g(self):\n"
      "        '''Doc.'''\n"
      "        return 2\n";
  std::vector<Edit> edits{
      edit(Action::replace_function, "A.f", "def f(self):\n    return '''a\nb'''\n"),
      edit(Action::prepend_body, "A.g", "print('''x\n    y''')\n")};
  Run r = run(src, edits);
  CHECK(r.out ==
        "class A:\n"
        "    def f(self):\n"
        "        return '''a\n"
        "b'''\n"
        "    def g(self):\n"
        "        '''Doc.'''\n"
        "        print('''x\n"
        "    y''')\n"
        "        return 2\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("a literal whose lines start with the body's indentation is not taken as applied", "[python][literal]") {
  // Normalizing strips the indentation; the literal's content must still match exactly.
  std::string src =
      "def f():\n"
      "    return '''a\n"
      "    b'''\n";
  std::vector<Edit> edits{edit(Action::replace_body, "f", "return '''a\nb'''\n")};
  Run r = run(src, edits);
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "def f():\n    return '''a\nb'''\n");
}

TEST_CASE("a literal in code indented as a whole keeps its own lines", "[python][literal]") {
  // The common indentation is the code's, measured on code lines only.
  std::string src = "def f():\n    pass\n";
  std::vector<Edit> edits{edit(Action::replace_body, "f", "  x = '''\nkeep'''\n  return x\n")};
  Run r = run(src, edits);
  CHECK(r.out == "def f():\n    x = '''\nkeep'''\n    return x\n");
}

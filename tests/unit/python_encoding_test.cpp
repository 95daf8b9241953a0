// Module encodings: a PEP 263 coding line decides how the bytes are read and written
// back; CR-only line ends are kept; bytes not valid in the declared encoding are named.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"
#include "sitepatch/util/error.hpp"

using namespace pytest;

namespace {

const std::string kLatin1 =
    "# -*- coding: latin-1 -*-\n"
    "def greet():\n"
    "    return \"caf\xE9\"\n";

}  // namespace

TEST_CASE("a latin-1 module is edited as text and written back in latin-1", "[python]") {
  Run r = run(kLatin1, {edit(Action::replace_body, "greet", "return \"cr\xC3\xA8me br\xC3\xBBl\xC3\xA9\"\n")});
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "# -*- coding: latin-1 -*-\n"
        "def greet():\n"
        "    return \"cr\xE8me br\xFBl\xE9\"\n");
  // The target's text before the edit is reported as UTF-8.
  CHECK(r.results[0].original == "def greet():\n    return \"caf\xC3\xA9\"");
  CHECK(idempotent(r.out, {edit(Action::replace_body, "greet", "return \"cr\xC3\xA8me br\xC3\xBBl\xC3\xA9\"\n")}));
}

TEST_CASE("new code the module's encoding cannot hold fails that edit", "[python]") {
  Module m(kLatin1, "pkg/mod.py");
  Edit e = edit(Action::replace_body, "greet", "return \"\xE2\x82\xAC 5\"\n");
  std::vector<EditResult> results;
  CHECK(m.apply({&e}, results) == kLatin1);
  CHECK(results[0].outcome == Outcome::failed);
  CHECK(results[0].message ==
        "pkg/mod.py is iso-8859-1 (its coding line), which cannot hold `\xE2\x82\xAC` (U+20AC) of the new code");
}

TEST_CASE("the coding line may be on line 2, after a comment, other names are iconv's", "[python]") {
  std::string cp1252 = "#!/usr/bin/python\n# vim: set fileencoding=cp1252 :\nX = \"\x80\"\n";
  Run r = run(cp1252, {edit(Action::set_value, "X", "\"\xE2\x82\xAC\xE2\x82\xAC\"", TargetKind::variable)});
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "#!/usr/bin/python\n# vim: set fileencoding=cp1252 :\nX = \"\x80\x80\"\n");
}

TEST_CASE("bytes not valid in the declared encoding name the file, line and offset", "[python]") {
  CHECK_THROWS_WITH(Module("x = 1\ny = '\xE9'\n", "pkg/mod.py"),
                    "pkg/mod.py: line 2, byte 0xE9 (offset 11) is not valid UTF-8 (Python reads a module "
                    "without a coding line as UTF-8)");
  CHECK_THROWS_WITH(Module("# coding: ascii\nx = '\xE9'\n", "pkg/mod.py"),
                    "pkg/mod.py: line 2, byte 0xE9 (offset 21) is not valid ascii");
  CHECK_THROWS_WITH(Module("# coding: klingon\n", "pkg/mod.py"),
                    "pkg/mod.py: its coding line names an unknown encoding, klingon");
  CHECK_THROWS_WITH(Module("# coding: utf-16\n", "pkg/mod.py"),
                    "pkg/mod.py: its coding line names utf-16, which Python cannot read source in");
  // iconv's shift_jis reads 0x5C as a yen sign, Python's as a backslash: where one escapes
  // a quote, the two trees part (a decoy definition for sitepatch, the real one for Python).
  CHECK_THROWS_WITH(Module("# coding: shift_jis\ns = '\\\\'\n", "pkg/mod.py"),
                    "pkg/mod.py: its coding line names shift_jis, whose byte 0x5C sitepatch cannot read as Python "
                    "does (as ASCII): the text it would edit could differ from the code Python runs");
  CHECK_NOTHROW(Module("# coding: latin-1\ns = '\\\\'\n", "pkg/mod.py"));
  CHECK_THROWS_WITH(Module("\xEF\xBB\xBF# coding: latin-1\n", "pkg/mod.py"),
                    "pkg/mod.py: it starts with a UTF-8 byte order mark but its coding line says latin-1");
}

TEST_CASE("a module with CR-only line ends parses and keeps them", "[python]") {
  std::string cr = "import os\r\rdef f(x):\r    return x\r\rdef g():\r    pass\r";
  Module m(cr);
  CHECK(m.syntax_problems().empty());
  CHECK(m.defines("g"));
  Edit body = edit(Action::replace_body, "f", "y = x * 2\nreturn y\n");
  Edit imp = import_edit("import sys");
  Run r = run(cr, {body, imp});
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "import os\rimport sys\r\rdef f(x):\r    y = x * 2\r    return y\r\rdef g():\r    pass\r");
  CHECK(idempotent(r.out, {body, imp}));
}

TEST_CASE("a very long first line is searched for a coding line without overflowing the stack", "[python]") {
  std::string line = "# " + std::string(5'000'000, 'x') + " coding: latin-1\n";
  Module m(line + "X = '\xE9'\n");
  CHECK(m.defines("X"));
}

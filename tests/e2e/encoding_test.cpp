// Encodings, end to end: recipes must be UTF-8; a module in a PEP 263 encoding or with
// CR-only line ends is patched in its own encoding and line ends, runs, and rolls back
// to pip's bytes (issue 10, #14); a stray `,` is a recipe error, not an endless parse (#13).
#include <catch2/catch.hpp>

#include <chrono>

#include "e2e_support.hpp"

namespace {

const std::string kLatin1 =
    "# -*- coding: latin-1 -*-\n"
    "\"\"\"Caf\xE9 helpers.\"\"\"\n"
    "\n"
    "\n"
    "def greet(name):\n"
    "    return \"caf\xE9 \" + name\n";

const std::string kCrOnly = "import os\r\r\rdef answer():\r    return 41\r\r\rdef other():\r    return os.sep\r";

struct EncodedEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  EncodedEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    testsupport::WheelSpec spec{"encpkg", "1.0",
                                {{"encpkg/__init__.py", ""},
                                 {"encpkg/latin.py", kLatin1},
                                 {"encpkg/cr.py", kCrOnly},
                                 {"encpkg/broken.py", "x = 1\ny = '\xE9'\n"}}};
    venv.install(testsupport::build_wheel(spec, tmp.path + "/wheels"));
  }
  std::string recipe(const std::string& name, const std::string& text) const {
    std::string path = tmp.path + "/" + name;
    testsupport::spit(path, text);
    return path;
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  std::string read(const std::string& rel) const { return testsupport::slurp(venv.site_packages + "/" + rel); }
};

}  // namespace

TEST_CASE("a latin-1 module is patched in latin-1, runs, and rolls back to pip's bytes", "[e2e]") {
  EncodedEnv env;
  std::string recipe = env.recipe("latin.yaml",
                                  "id: latin\n"
                                  "edits:\n"
                                  "  - module: encpkg.latin\n"
                                  "    function: greet\n"
                                  "    replace-body: |\n"
                                  "      return \"cr\xC3\xA8me \" + name\n");
  auto plan = env.sp({"plan", recipe});
  REQUIRE(plan.status == 0);
  // The diff is of the file's own bytes, as `git apply` needs them.
  CHECK(plan.out.find("-    return \"caf\xE9 \" + name\n+    return \"cr\xE8me \" + name\n") != std::string::npos);
  auto json = env.sp({"--json", "plan", recipe});
  CHECK(json.status == 0);
  CHECK(json.err.find("internal error") == std::string::npos);

  REQUIRE(env.sp({"apply", recipe}).status == 0);
  CHECK(env.read("encpkg/latin.py") ==
        "# -*- coding: latin-1 -*-\n\"\"\"Caf\xE9 helpers.\"\"\"\n\n\ndef greet(name):\n    return \"cr\xE8me \" + name\n");
  auto run = env.venv.run_python("import encpkg.latin as m; print(m.greet('x').encode('utf-8'))");
  CHECK(run.out == "b'cr\\xc3\\xa8me x'\n");
  CHECK(env.sp({"verify"}).status == 0);

  REQUIRE(env.sp({"rollback", "latin"}).status == 0);
  CHECK(env.read("encpkg/latin.py") == kLatin1);
}

TEST_CASE("new code a latin-1 module cannot hold is refused, naming the file and the character", "[e2e]") {
  EncodedEnv env;
  std::string recipe = env.recipe("euro.yaml",
                                  "id: euro\n"
                                  "edits:\n"
                                  "  - module: encpkg.latin\n"
                                  "    function: greet\n"
                                  "    replace-body: return \"\xE2\x82\xAC\"\n");
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("encpkg/latin.py is iso-8859-1 (its coding line), which cannot hold `\xE2\x82\xAC` (U+20AC) "
                   "of the new code") != std::string::npos);
  CHECK(env.read("encpkg/latin.py") == kLatin1);
}

TEST_CASE("a module with CR-only line ends is patched with CR line ends and runs", "[e2e]") {
  EncodedEnv env;
  std::string recipe = env.recipe("cr.yaml",
                                  "id: cr\n"
                                  "edits:\n"
                                  "  - module: encpkg.cr\n"
                                  "    function: answer\n"
                                  "    replace-body: |\n"
                                  "      x = 41\n"
                                  "      return x + 1\n");
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  CHECK(env.read("encpkg/cr.py") ==
        "import os\r\r\rdef answer():\r    x = 41\r    return x + 1\r\r\rdef other():\r    return os.sep\r");
  CHECK(env.venv.run_python("import encpkg.cr as m; print(m.answer())").out == "42\n");
  REQUIRE(env.sp({"rollback", "cr"}).status == 0);
  CHECK(env.read("encpkg/cr.py") == kCrOnly);
}

TEST_CASE("a module not valid in its declared encoding is named with line and offset", "[e2e]") {
  EncodedEnv env;
  std::string recipe = env.recipe("broken.yaml",
                                  "id: broken\n"
                                  "edits:\n"
                                  "  - module: encpkg.broken\n"
                                  "    variable: x\n"
                                  "    set-value: '2'\n");
  auto r = env.sp({"plan", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: error: encpkg/broken.py: line 2, byte 0xE9 (offset 11) is not valid UTF-8 (Python "
                   "reads a module without a coding line as UTF-8)\n") != std::string::npos);
}

TEST_CASE("a recipe with a latin-1 byte or a stray comma exits 2 at once, with its position", "[e2e]") {
  EncodedEnv env;
  std::string latin = env.recipe("l1.yaml",
                                 "id: l1\n"
                                 "description: caf\xE9\n"
                                 "edits:\n"
                                 "  - module: encpkg.latin\n"
                                 "    function: greet\n"
                                 "    replace-body: return 1\n");
  auto r = env.sp({"plan", latin});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: invalid recipe\n" + latin + ":2:17: not UTF-8: byte 0xE9 (a recipe must be UTF-8 text)\n");

  std::string comma = env.recipe("comma.yaml", ",");
  auto t0 = std::chrono::steady_clock::now();
  r = env.sp({"plan", comma});
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: invalid recipe\n" + comma + ":1:1: YAML syntax error: unexpected `,`\n");
}

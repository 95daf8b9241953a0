// Edits that used to apply silently wrong: string literals re-indented, statements
// taken as a set-value, names nothing binds, and a broken result reported nowhere
// near the edit that broke it.
#include <catch2/catch.hpp>

#include "e2e_support.hpp"

TEST_CASE("a multi-line literal in new code keeps its value in the installed function", "[e2e][literal]") {
  // Python itself runs the patched function: its return value is the literal's content.
  e2e::DemoEnv env;
  std::string recipe = env.recipe("sql.yaml",
                                  "id: sql\n"
                                  "edits:\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: get_cuda_path\n"
                                  "    replace-body: |\n"
                                  "      q = \"\"\"SELECT *\n"
                                  "      FROM t\n"
                                  "        WHERE x = 1\"\"\"\n"
                                  "      name = 'cuda'\n"
                                  "      f = f'''{name}\n"
                                  "      bin'''\n"
                                  "      b = b'''\n"
                                  "      \\x00'''\n"
                                  "      return (q, f, b, r'''a\\\n"
                                  "      b''')\n");
  auto r = env.sp({"apply", recipe});
  REQUIRE(r.status == 0);
  auto py = env.venv.run_python("import flashinfer.jit.cpp_ext as m; print(repr(m.get_cuda_path()))");
  CHECK(py.out == "('SELECT *\\nFROM t\\n  WHERE x = 1', 'cuda\\nbin', b'\\n\\x00', 'a\\\\\\nb')\n");
  // A second apply finds it applied: the literal is compared byte for byte.
  auto again = env.sp({"apply", recipe});
  CHECK(again.status == 0);
  CHECK(again.err.find("already applied  sql") != std::string::npos);
}

TEST_CASE("literals keep their value in a tab-indented module too", "[e2e][literal]") {
  // A module of our own in the temporary venv's site-packages, indented with tabs; the
  // patched method must return what the recipe's code returns when Python runs it as
  // written.
  e2e::DemoEnv env;
  testsupport::spit(env.site("tabbed.py"),
                    "class Q:\n"
                    "\tdef sql(self):\n"
                    "\t\treturn ''\n");
  std::string code =
      "def sql(self):\n"
      "    head = b\"\"\"A\n"
      "      B\"\"\"\n"
      "    return (head.decode()\n"
      "            + '''\n"
      "    C''' + rf\"\"\"{self!r:.0}\\d\n"
      "\tD\"\"\")\n";
  std::string recipe_text = "id: tabs\nedits:\n  - file: tabbed.py\n    function: Q.sql\n    replace-function: |\n";
  for (const auto& line : sitepatch::util::split(code, '\n'))
    if (!line.empty()) recipe_text += "      " + line + "\n";
  std::string recipe = env.recipe("tabs.yaml", recipe_text);
  auto r = env.sp({"apply", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(env.read("tabbed.py") ==
        "class Q:\n"
        "\tdef sql(self):\n"
        "\t\thead = b\"\"\"A\n"
        "      B\"\"\"\n"
        "\t\treturn (head.decode()\n"
        "\t\t\t\t+ '''\n"
        "    C''' + rf\"\"\"{self!r:.0}\\d\n"
        "\tD\"\"\")\n");
  std::string as_written = env.recipe("as_written.py", code);
  auto want = env.venv.run_python("ns = {}; exec(open('" + as_written + "').read(), ns); print(repr(ns['sql'](None)))");
  auto got = env.venv.run_python("import tabbed; print(repr(tabbed.Q().sql()))");
  CHECK(want.out == "'A\\n      B\\n    C\\\\d\\n\\tD'\n");
  CHECK(got.out == want.out);
}

TEST_CASE("set-value with a statement is an invalid recipe, at the statement", "[e2e][expression]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("value.yaml",
                                  "id: value\n"
                                  "edits:\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    variable: TIMEOUT\n"
                                  "    set-value: |\n"
                                  "      30\n"
                                  "      import os; os.system('touch /tmp/owned')\n");
  auto r = env.sp({"plan", recipe});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: invalid recipe\n" + recipe +
                     ":7:7: `set-value` must be one Python expression; a second statement follows it: "
                     "`import os`\n");
  CHECK(env.pristine());
}

TEST_CASE("a name nothing binds: plan warns, apply refuses, ensure-import or --force", "[e2e][unbound]") {
  e2e::DemoEnv env;
  auto recipe_with = [&](const std::string& extra) {
    return env.recipe("which.yaml",
                      "id: which\n"
                      "edits:\n"
                      "  - module: flashinfer.jit.cpp_ext\n"
                      "    function: get_cuda_path\n"
                      "    replace-body: |\n"
                      "      found = shutil.which('nvcc')\n"
                      "      return os.path.dirname(found) if found else None\n" +
                          extra);
  };
  std::string recipe = recipe_with("");
  std::string warning =
      "    warning: uses `shutil`, which flashinfer/jit/cpp_ext.py never binds (no import, definition or "
      "assignment) and is not a builtin: add `ensure-import: import shutil` (or the import that binds it) "
      "to the edit at " + recipe + ":3\n";

  auto plan = env.sp({"plan", recipe});
  CHECK(plan.status == 0);
  CHECK(plan.err.find("will apply  which  flashinfer.jit.cpp_ext:get_cuda_path  replace-body  "
                      "(flashinfer/jit/cpp_ext.py:10)\n" + warning) != std::string::npos);

  auto refused = env.sp({"apply", recipe});
  INFO(refused.err);
  CHECK(refused.status == 1);
  CHECK(refused.err.find(recipe + ":3:3: fails  which  flashinfer.jit.cpp_ext:get_cuda_path  replace-body  "
                         "(flashinfer/jit/cpp_ext.py:10): uses `shutil`") != std::string::npos);
  CHECK(refused.err.find("; or apply --force to write it anyway\n") != std::string::npos);
  CHECK(env.pristine());
  // The dry run exits as apply would, with the same refusal.
  auto dry = env.sp({"apply", "--dry-run", recipe});
  CHECK(dry.status == 1);
  CHECK(dry.err == refused.err);
  CHECK(env.sp({"apply", "--dry-run", "--force", recipe}).status == 0);

  auto forced = env.sp({"apply", "--force", recipe});
  CHECK(forced.status == 0);
  CHECK(env.sp({"rollback", "which"}).status == 0);
  CHECK(env.pristine());

  std::string fixed = recipe_with("    ensure-import: import shutil\n");
  auto clean = env.sp({"plan", fixed});
  CHECK(clean.status == 0);
  CHECK(clean.err.find("warning") == std::string::npos);
}

TEST_CASE("a result that does not compile names the edit, shows its lines and Python's message", "[e2e][result]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("paren.yaml",
                                  "id: paren\n"
                                  "edits:\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: get_cuda_path\n"
                                  "    add-decorator: torch.compiler.disable\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: load_cuda_ops\n"
                                  "    replace: {old: 'return {', new: 'return ('}\n");
  auto r = env.sp({"plan", recipe});
  INFO(r.err);
  CHECK(r.status == 1);
  auto version = env.venv.run_python("import platform; print(platform.python_version(), end='')").out;
  CHECK(r.err.find(
            recipe + ":6:3: fails  paren  flashinfer.jit.cpp_ext:load_cuda_ops  replace  "
            "(flashinfer/jit/cpp_ext.py:24): Python " + version + " rejects the result: closing parenthesis '}' "
            "does not match opening parenthesis '(' (from " + recipe + ":8)\n"
            "    flashinfer/jit/cpp_ext.py, as the edits would make it:\n"
            "      27 |     with open(lock_path, \"a\"):\n"
            "      28 |         pass\n"
            "    > 29 |     return (\"name\": name, \"sources\": sources, \"cuda\": str(get_cuda_version())}\n"
            "         | " + std::string(77, ' ') + "^\n") !=
        std::string::npos);
  CHECK(r.err.find(recipe + ":3:3: fails  paren  flashinfer.jit.cpp_ext:get_cuda_path  add-decorator  "
                   "(flashinfer/jit/cpp_ext.py:10): not applied: flashinfer/jit/cpp_ext.py would not compile "
                   "with the edit at " + recipe + ":6:3\n") != std::string::npos);
}

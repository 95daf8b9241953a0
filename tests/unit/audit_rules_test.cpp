// Rules: patterns, the shipped set, rules files with every problem at its position,
// and the literal pre-filter.
#include <catch2/catch.hpp>

#include "sitepatch/audit/prefilter.hpp"
#include "sitepatch/audit/rules.hpp"
#include "sitepatch/util/error.hpp"

using namespace sitepatch::audit;

namespace {

// The message of the error parse_rules throws, or "" when it accepts the text.
std::string error_of(const std::string& text) {
  try {
    parse_rules(text, "r.yaml");
  } catch (const sitepatch::Error& e) {
    CHECK(e.code() == sitepatch::Exit::usage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("`*` stands for exactly one name segment", "[audit]") {
  CHECK(matches("subprocess.*", "subprocess.run"));
  CHECK_FALSE(matches("subprocess.*", "subprocess"));
  CHECK_FALSE(matches("subprocess.*", "subprocess.Popen.wait"));
  CHECK(matches("open", "open"));
  CHECK_FALSE(matches("open", "io.open"));
  // The same object under another module's name matches the builtin's rule.
  RuleSet rules;
  rules.add(parse_rules("rules:\n  - {id: o, match: open, category: f, message: m}\n", "r.yaml"));
  for (const char* same : {"open", "io.open", "builtins.open", "future.builtins.open"}) CHECK(rules.match(same));
  for (const char* other : {"gzip.open", "PIL.Image.open", "builtins.open.x", "os.open"}) CHECK_FALSE(rules.match(other));
  CHECK(matches("*.path.exists", "os.path.exists"));
  CHECK_FALSE(matches("os.path.exists", "os.path.exist"));
}

TEST_CASE("the shipped rules load and flag what the issue names", "[audit]") {
  RuleSet rules;
  rules.add(builtin_rules());
  for (const char* name : {"subprocess.run", "subprocess.check_output", "os.system", "os.popen", "open", "io.open",
                           "os.stat", "os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.getmtime",
                           "pathlib.Path.read_text", "threading.Lock", "threading.RLock", "threading.Condition",
                           "importlib.import_module", "ctypes.CDLL", "torch.utils.cpp_extension.load",
                           "time.sleep", "filelock.FileLock"})
    CHECK(rules.match(name) != nullptr);
  CHECK(rules.match("os.path.join") == nullptr);
  // The rule for the name as written wins over the one for its builtin spelling.
  CHECK(rules.match("io.open")->id == "io-open");
  CHECK(rules.match("builtins.open")->id == "open");
  CHECK(rules.match("open")->id == "open");
  CHECK(rules.match("time.time") == nullptr);
  CHECK(rules.match("subprocess.run")->category == "process");
}

TEST_CASE("a user's rule with a shipped id replaces it, a new id adds one", "[audit]") {
  RuleSet rules;
  rules.add(builtin_rules());
  size_t n = rules.all().size();
  rules.add(parse_rules("rules:\n"
                        "  - {id: time-sleep, match: time.sleep, category: mine, message: mine}\n"
                        "  - {id: jit-load, match: mylib.jit.*, category: jit, message: builds}\n",
                        "user.yaml"));
  CHECK(rules.all().size() == n + 1);
  CHECK(rules.match("time.sleep")->category == "mine");
  CHECK(rules.match("mylib.jit.build")->origin == "user.yaml");
  CHECK(rules.match("mylib.jit.build")->line == 3);
}

TEST_CASE("a malformed rules file: every problem with file:line:col", "[audit]") {
  CHECK(error_of("rules: [1\n") == "invalid rules file\nr.yaml:2:1: YAML syntax error: end of sequence flow not found");
  CHECK(error_of("- a\n") == "invalid rules file\nr.yaml:1:1: a rules file is a mapping with a `rules:` list");
  CHECK(error_of("rules: x\n") == "invalid rules file\nr.yaml:1:8: `rules` must be a list of rules");
  CHECK(error_of("rules:\n"
                 "  - id: a\n"
                 "    match: subprocess.*x\n"
                 "    category: process\n"
                 "    mesage: spawns\n"
                 "  - id: a\n"
                 "    match: open\n"
                 "    category: ''\n"
                 "    message: opens\n"
                 "  - just a string\n") ==
        "invalid rules file\n"
        "r.yaml:2:5: rule 1: missing required key `message`\n"
        "r.yaml:3:12: rule 1: `match` must be a dotted name whose segments are names, `*` or `{a,b,...}` (one of those names), got `subprocess.*x`\n"
        "r.yaml:5:5: rule 1: unknown key `mesage`; did you mean `message`?\n"
        "r.yaml:6:9: rule 2: id `a` is used by an earlier rule of this file\n"
        "r.yaml:8:15: rule 2: `category` must be text\n"
        "r.yaml:10:5: rule 3: a rule is a mapping with `id`, `match`, `category`, `message`");
  CHECK(error_of("rules:\n  - {id: a, match: open, category: c, message: m}\nextra: 1\n") ==
        "invalid rules file\nr.yaml:3:1: unknown key `extra`; a rules file has only `rules:`");
}

TEST_CASE("the pre-filter keeps a file only when its text can hold a flagged call", "[audit]") {
  RuleSet rules;
  rules.add(parse_rules("rules:\n"
                        "  - {id: s, match: subprocess.*, category: p, message: m}\n"
                        "  - {id: o, match: open, category: f, message: m}\n"
                        "  - {id: e, match: os.path.exists, category: f, message: m}\n",
                        "r.yaml"));
  Prefilter filter(rules);
  CHECK(filter.needs() == std::vector<std::vector<std::string>>{{"subprocess"}, {"open"}, {"os", "path", "exists"}});
  auto keeps = [&](std::string_view text, std::string_view module = "m") { return filter.judge(text, module).parse; };
  CHECK(keeps("import subprocess\n"));
  CHECK(keeps("with open (p) as f:\n"));
  CHECK(keeps("from os.path import exists\n"));
  CHECK(keeps("import builtins\nbuiltins.open(p)\n"));
  // A builtin passed on is used too; one imported under another name is kept by its module.
  CHECK(keeps("paths = map(open, names)\n"));
  CHECK(keeps("from io import open as o\no(p)\n"));
  // Not a use of the builtin: an attribute, a longer name, a word in prose.
  CHECK_FALSE(keeps("x = gzip.open(p)\nreopen(p)\n# open the door\nopened = 1\n"));
  // Every segment of the rule, each a whole word: `exists` alone, or `os` only inside
  // longer words, cannot spell os.path.exists.
  CHECK_FALSE(keeps("if exists(p): pass\n"));
  CHECK_FALSE(keeps("from posixpath import exists\npos = exists(p)\n"));
  CHECK_FALSE(keeps("from subprocesses import run\n"));
  // A segment may come from the module's own name (its functions, relative imports):
  // then no block can be told apart, the file is read whole.
  auto v = filter.judge("from . import path\npath.exists(p)\n", "os.x");
  CHECK(v.parse);
  CHECK(v.whole);
  v = filter.judge("import os\n\ndef f():\n    return os.path.exists(p)\n", "pkg.m");
  CHECK(v.parse);
  CHECK_FALSE(v.whole);
  CHECK(v.seeds == std::vector<std::string>{"exists", "os", "path"});
}

TEST_CASE("rules have a severity: the shipped ones choose, a user's defaults to warning", "[audit]") {
  RuleSet rules;
  rules.add(builtin_rules());
  CHECK(rules.match("subprocess.run")->severity == Severity::error);
  CHECK(rules.match("filelock.FileLock")->severity == Severity::error);
  CHECK(rules.match("open")->severity == Severity::warning);
  CHECK(rules.match("os.path.exists")->severity == Severity::info);
  auto mine = parse_rules("rules:\n"
                          "  - {id: a, match: mylib.a, category: c, message: m}\n"
                          "  - {id: b, match: mylib.b, category: c, message: m, severity: error}\n",
                          "r.yaml");
  CHECK(mine[0].severity == Severity::warning);
  CHECK(mine[1].severity == Severity::error);
  CHECK(error_of("rules:\n  - {id: a, match: open, category: c, message: m, severity: fatal}\n") ==
        "invalid rules file\nr.yaml:2:61: rule 1: `severity` must be error, warning or info, got `fatal`");
}

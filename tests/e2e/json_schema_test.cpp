// The --json contract: every command's document, on a real venv, validates against its
// JSON Schema in docs/schema/ (checked by python3-jsonschema, as a script's author would),
// carries "schema": 1 and says "none" with null; every error, the command line's
// included, is a document too. And the published schemas for recipes, rules and hints
// files accept every file sitepatch ships and tests, and refuse what sitepatch refuses.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dynamo_log_fixtures.hpp"
#include "e2e_support.hpp"
#include "sitepatch/recipe/recipe.hpp"

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string schema_dir() { return std::string(SITEPATCH_SOURCE_DIR) + "/docs/schema"; }

// What is wrong with `text` under docs/schema/<schema>: "" when it is valid, else one
// line per violation. `yaml`: the text is a YAML file (recipes, rules, hints).
std::string violations(const std::string& schema, const std::string& text, bool yaml = false) {
  std::vector<std::string> argv = {"/usr/bin/python3", std::string(SITEPATCH_SOURCE_DIR) + "/tests/support/validate_schema.py",
                                   schema_dir() + "/" + schema};
  if (yaml) argv.push_back("--yaml");
  argv.push_back("-");
  auto r = sitepatch::util::run(argv, text);
  if (r.status != 0 && r.out.empty()) return "validate_schema.py failed: " + r.err;
  return r.out;
}

// A command's document: the exit code it should have, "schema": 1, valid under its schema.
json document(const sitepatch::util::RunResult& r, const std::string& schema, int status) {
  INFO(r.err);
  INFO(r.out);
  CHECK(r.status == status);
  json j = json::parse(r.out);
  CHECK(j["schema"] == 1);
  CHECK(violations(schema + ".json", r.out) == "");
  return j;
}

// An error as --json prints it: valid under error.json, its kind, the same exit code and
// the human message on stderr as without --json.
json error_document(const sitepatch::util::RunResult& r, const std::string& kind, int status) {
  json j = document(r, "error", status);
  CHECK(j["ok"] == false);
  CHECK(j["exit_code"] == status);
  CHECK(j["error"]["kind"] == kind);
  CHECK(r.err.rfind("sitepatch: error: " + j["error"]["message"].get<std::string>() + "\n", 0) == 0);
  return j;
}

// The recipe part of each case of a golden file (tests/golden/*.txt: a title between
// ==== lines, the module, `---`, the recipe, `---`, the expected output).
std::vector<std::string> golden_recipes(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(testsupport::slurp(path));
  auto is_bar = [](const std::string& l) { return l.size() >= 3 && l.find_first_not_of('=') == std::string::npos; };
  int part = -1, bars = 0;
  for (std::string l; std::getline(in, l);) {
    if (is_bar(l)) {
      if (++bars % 2 == 0) part = 0;  // the bar after the title: the module follows
      continue;
    }
    if (part < 0) continue;
    if (l == "---" && part < 2) {
      if (++part == 1) out.emplace_back();
      continue;
    }
    if (part == 1) out.back() += l + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("json schema: every command --help lists has an output schema, and every schema is valid", "[e2e][json]") {
  auto help = testsupport::run_sitepatch({"--help"});
  REQUIRE(help.status == 0);
  // The commands: the "  NAME   description" lines between "Subcommands:" and a blank line.
  std::set<std::string> commands;
  size_t at = help.out.find("\nSubcommands:\n");
  REQUIRE(at != std::string::npos);
  std::istringstream in(help.out.substr(at + 14));
  std::regex row("^  ([a-z][a-z-]*) .*");
  std::smatch m;
  for (std::string l; std::getline(in, l) && !l.empty();)
    if (std::regex_match(l, m, row)) commands.insert(m[1]);
  CHECK(commands.size() >= 11);
  for (auto& c : commands) {
    INFO("command " << c);
    CHECK(fs::is_regular_file(schema_dir() + "/" + c + ".json"));
  }
  for (auto& e : fs::directory_iterator(schema_dir())) {
    INFO(e.path());
    auto r = sitepatch::util::run({"/usr/bin/python3", std::string(SITEPATCH_SOURCE_DIR) + "/tests/support/validate_schema.py",
                                   e.path().string()});
    CHECK(r.status == 0);
    CHECK(r.out == "");
  }
}

TEST_CASE("json schema: plan, apply, list, verify, status, log, show and rollback documents", "[e2e][json]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");

  auto plan = document(env.sp({"--json", "plan", recipe}), "plan", 0);
  CHECK(plan["edits"][0]["file"] == "flashinfer/jit/cpp_ext.py");
  CHECK(plan["edits"][0]["message"].is_null());
  CHECK(plan["files"][0]["debian_package"].is_null());

  // A dry run makes no commit: null, not "".
  auto dry = document(env.sp({"apply", "--dry-run", recipe, "--json"}), "apply", 0);
  CHECK(dry["dry_run"] == true);
  CHECK(dry["written"] == false);
  CHECK(dry["commit"].is_null());
  CHECK(env.pristine());

  auto applied = document(env.sp({"--json", "apply", recipe}), "apply", 0);
  CHECK(applied["written"] == true);
  CHECK(applied["commit"].get<std::string>().size() == 40);
  auto again = document(env.sp({"--json", "apply", recipe}), "apply", 0);
  CHECK(again["commit"].is_null());

  auto list = document(env.sp({"--json", "list"}), "list", 0);
  REQUIRE(list["patches"].size() == 1);
  CHECK(list["patches"][0]["distribution"] == "flashinfer-python==0.5.3");
  CHECK(list["patches"][0]["shared_by"].is_null());
  CHECK(list["patches"][0]["files"][0]["message"].is_null());
  CHECK(list["patches"][0]["files"][0]["upgrade"].is_null());
  document(env.sp({"--json", "verify"}), "verify", 0);
  auto status = document(env.sp({"--json", "status"}), "status", 0);
  CHECK(status["patches"][0]["advice"] == "ok");
  CHECK(status["patches"][0]["command"].is_null());
  CHECK(status["patches"][0]["note"].is_null());

  auto log = document(env.sp({"--json", "log"}), "log", 0);
  CHECK(log["entries"][0]["commit"] == applied["commit"]);
  CHECK_FALSE(log["entries"][0].contains("diff"));  // only with -p
  auto patch = document(env.sp({"--json", "log", "-p", "-n", "1"}), "log", 0);
  REQUIRE(patch["entries"].size() == 1);
  CHECK(patch["entries"][0]["diff"].get<std::string>().find("+    return Version(torch.version.cuda)") !=
        std::string::npos);
  std::string oid = applied["commit"].get<std::string>();
  auto commit = document(env.sp({"--json", "show", oid.substr(0, 10)}), "show", 0);
  CHECK(commit["commit"]["commit"] == oid);
  CHECK(commit["commit"]["diff"] == patch["entries"][0]["diff"]);
  auto show = document(env.sp({"--json", "show", "flashinfer-dynamo"}), "show", 0);
  CHECK(show["diff"].get<std::string>().find("+    return Version(torch.version.cuda)") != std::string::npos);
  auto shown = document(env.sp({"--json", "show", "--recipe", "flashinfer-dynamo"}), "show", 0);
  CHECK(shown["recipe"] == testsupport::slurp(recipe));

  // Someone edits a patched file: status and verify exit 3, and still print their documents.
  std::string patched = env.read("flashinfer/jit/cpp_ext.py");
  testsupport::spit(env.site("flashinfer/jit/cpp_ext.py"), patched + "# local change\n");
  auto drift = document(env.sp({"--json", "status"}), "status", 3);
  CHECK(drift["ok"] == false);
  CHECK(drift["patches"][0]["advice"] == "changed by others");
  CHECK(drift["patches"][0]["command"].is_string());
  CHECK(drift["patches"][0]["files"][0]["message"].is_string());
  CHECK(document(env.sp({"--json", "verify"}), "verify", 3)["ok"] == false);
  document(env.sp({"--json", "list"}), "list", 0);
  // adopt: a dry run records nothing, then the file as it is now becomes the applied state.
  auto would = document(env.sp({"--json", "adopt", "--dry-run", "flashinfer-dynamo"}), "adopt", 0);
  CHECK(would["commit"].is_null());
  CHECK(would["written"] == false);
  REQUIRE(would["files"].size() == 1);
  CHECK(would["files"][0]["path"] == "flashinfer/jit/cpp_ext.py");
  auto adopted = document(env.sp({"--json", "adopt", "flashinfer-dynamo"}), "adopt", 0);
  CHECK(adopted["commit"].get<std::string>().size() == 40);
  CHECK(document(env.sp({"--json", "status"}), "status", 0)["patches"][0]["advice"] == "ok");
  // reapply: nothing taken away, so nothing to do; named, apply's answer.
  auto nothing = document(env.sp({"--json", "reapply", "--all"}), "reapply", 0);
  CHECK(nothing["written"] == false);
  CHECK(nothing["left_out"] == nlohmann::json::array());
  auto named = document(env.sp({"--json", "reapply", "--dry-run", "flashinfer-dynamo"}), "reapply", 0);
  CHECK(named["commit"].is_null());
  CHECK(named["edits"].size() == 2);

  auto preview = document(env.sp({"--json", "rollback", "--dry-run", "flashinfer-dynamo"}), "rollback", 0);
  CHECK(preview["commit"].is_null());
  CHECK(preview["files"].size() == 2);
  auto rolled = document(env.sp({"--json", "rollback", "flashinfer-dynamo"}), "rollback", 0);
  CHECK(rolled["commit"].get<std::string>().size() == 40);
  CHECK(env.pristine());
  document(env.sp({"--json", "rollback", "--missing-ok", "flashinfer-dynamo"}), "rollback", 0);
  CHECK(document(env.sp({"--json", "list"}), "list", 0)["patches"].empty());
  auto after = document(env.sp({"--json", "log"}), "log", 0);
  CHECK(after["entries"].size() == log["entries"].size() + 2);  // adopt, rollback
  // sync: --check before (exit 3), the sync, and in sync after.
  auto out_of_sync = document(env.sp({"--json", "sync", "--check", recipe}), "sync", 3);
  CHECK(out_of_sync["in_sync"] == false);
  CHECK(out_of_sync["steps"][0]["step"] == "apply");
  auto synced = document(env.sp({"--json", "sync", recipe}), "sync", 0);
  CHECK(synced["commit"].get<std::string>().size() == 40);
  auto in_sync = document(env.sp({"--json", "sync", recipe}), "sync", 0);
  CHECK(in_sync["in_sync"] == true);
  CHECK(in_sync["commit"].is_null());
  CHECK(in_sync["steps"][0]["recipe"].is_string());
  auto refreshed = document(env.sp({"--json", "refresh", "--dry-run", "flashinfer-dynamo"}), "refresh", 0);
  CHECK(refreshed["recipe"].is_null());
  CHECK(refreshed["commit"].is_null());
  CHECK(after["entries"][0]["commit"] == rolled["commit"]);
}

TEST_CASE("json schema: try and apply --check documents", "[e2e][json]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto ran = document(env.sp({"--json", "try", recipe, "--", env.venv.python, "-c", "print('hi')"}), "try", 0);
  CHECK(ran["ran"] == true);
  CHECK(ran["stdout"] == "hi\n");
  CHECK(env.pristine());
  std::string broken = env.tmp.path + "/broken.yaml";
  testsupport::spit(broken, "id: broken\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: nowhere\n"
                            "    replace-body: |\n      return 1\n");
  auto not_run = document(env.sp({"--json", "try", broken, "--", "true"}), "try", 1);
  CHECK(not_run["ran"] == false);
  CHECK(not_run["status"].is_null());

  auto checked = document(env.sp({"--json", "apply", "--check-with", "exit 4", recipe}), "apply", 1);
  CHECK(checked["check"]["status"] == 4);
  CHECK(checked["rolled_back"] == true);
  CHECK(env.pristine());
}

TEST_CASE("json schema: audit, rules and explain documents", "[e2e][json]") {
  e2e::DemoEnv env;
  std::string wheels = env.tmp.path + "/wheels";
  env.venv.install({e2e::data_wheel("demo-jit", "1.0", wheels), e2e::data_wheel("jitbase", "2.0", wheels),
                    e2e::data_wheel("fakeinfer", "0.1.0", wheels)});

  auto rules = document(env.sp({"--json", "rules"}), "rules", 0);
  CHECK(rules["rules"].size() > 10);

  // A walk, a scan, and --format json, which is --json.
  auto walk = document(env.sp({"--json", "audit", "demo.api:quantize"}), "audit", 0);
  CHECK(walk["chains"].size() == 3);
  auto scan = document(env.sp({"audit", "--package", "demo-jit", "--json"}), "audit", 0);
  CHECK(scan["calls"].get<int>() > 0);
  document(env.sp({"audit", "--path", env.venv.site_packages + "/jitbase", "--format", "json"}), "audit", 0);
  // SARIF is a standard of its own, whose schema allows no "schema" key: it has none.
  auto sarif = env.sp({"audit", "--package", "demo-jit", "--format", "sarif"});
  CHECK(sarif.status == 0);
  auto s = json::parse(sarif.out);
  CHECK(s["version"] == "2.1.0");
  CHECK(!s.contains("schema"));

  std::string logs = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/";
  auto hints = document(env.sp({"--json", "explain", "--list-hints"}), "explain", 0);
  CHECK(hints["hints"][0]["calls"].is_null());  // a hint that says what an operation means proposes no fix
  auto full = document(env.sp({"--json", "explain", logs + "graph_breaks.txt"}), "explain", 3);
  CHECK(full["fixes"].size() == 2);
  CHECK(full["recipe"].is_string());
  CHECK(full["recipe_file"].is_null());
  std::string out = env.tmp.path + "/fix.yaml";
  auto written = document(env.sp({"--json", "explain", logs + "gemm_graph_breaks.txt", "--recipe", out}), "explain", 3);
  CHECK(written["recipe_file"] == out);
  // The recipe explain writes is one the recipe schema accepts.
  CHECK(violations("recipe.schema.json", testsupport::slurp(out), true) == "");
  document(env.sp({"--json", "explain", logs + "fullgraph.txt"}), "explain", 3);
  std::string clean = env.recipe("clean.txt", "loss 0.25\n");
  auto none = document(env.sp({"--json", "explain", clean}), "explain", 0);
  CHECK(none["breaks"].empty());
  std::string user = env.recipe("user.txt", e2e::kUserCodeBreakLog);
  auto outside = document(env.sp({"--json", "explain", user}), "explain", 0);
  CHECK(outside["breaks"][0]["in_library"] == false);
}

TEST_CASE("json schema: --version --json says what the text says, field by field", "[e2e][json]") {
  auto text = testsupport::run_sitepatch({"--version"});
  REQUIRE(text.status == 0);
  for (auto args : {std::vector<std::string>{"--version", "--json"}, std::vector<std::string>{"--json", "--version"}}) {
    auto r = testsupport::run_sitepatch(args);
    json j = document(r, "version", 0);
    CHECK(j["ok"] == true);
    CHECK(r.err == "");
    std::string expected = "sitepatch " + j["version"].get<std::string>() + " (commit " + j["commit"].get<std::string>() +
                           ")\nlibgit2 " + j["libgit2"].get<std::string>() + ", tree-sitter language ABI " +
                           std::to_string(j["tree_sitter_language_abi"].get<int>()) + ", tree-sitter-python " +
                           j["tree_sitter_python"].get<std::string>() + "\n";
    CHECK(text.out == expected);
  }
}

TEST_CASE("json schema: with --json every error is one document on stdout, the command line's too", "[e2e][json]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");

  // The command line, --json before or after the command.
  auto typo = error_document(testsupport::run_sitepatch({"--json", "aply"}), "usage", 2);
  CHECK(typo["error"]["message"] == "unknown command `aply`; did you mean `apply`?");
  CHECK(typo["error"]["diagnostics"].is_null());
  for (auto args : {std::vector<std::string>{"--json", "plan", "--dryrun", recipe},
                    std::vector<std::string>{"plan", "--dryrun", recipe, "--json"}}) {
    auto option = error_document(env.sp(args), "usage", 2);
    CHECK(option["error"]["message"] ==
          "The following argument was not expected: --dryrun; `--dry-run` is an option of apply, reapply, sync, rollback, adopt, refresh, wheel, edit and capture, not of plan");
  }
  auto missing = error_document(testsupport::run_sitepatch({"apply", "--json"}), "usage", 2);
  CHECK(missing["error"]["message"] == "recipes is required");
  error_document(testsupport::run_sitepatch({"--json"}), "usage", 2);
  error_document(env.sp({"--json", "rollback", "a", "--all"}), "usage", 2);
  auto mode = error_document(env.sp({"audit", "--format", "json"}), "usage", 2);
  CHECK(mode["error"]["message"] == "audit needs exactly one of MODULE[:FUNCTION], --package, --module, --all, --path");
  // --suggest prints a recipe, which is no document: refused rather than mixed into stdout.
  auto suggest = error_document(env.sp({"--json", "audit", "demo.api:quantize", "--suggest"}), "usage", 2);
  CHECK(suggest["error"]["message"] == "--json and --suggest: --suggest prints a recipe, not a document");

  // A recipe: every problem with its file, line and column; a file that cannot be read has no line.
  std::string bad = env.recipe("bad.yaml", "id: x\nedits: 3\n");
  auto invalid = error_document(env.sp({"--json", "plan", bad}), "recipe", 2);
  REQUIRE(invalid["error"]["diagnostics"].size() == 1);
  CHECK(invalid["error"]["diagnostics"][0] ==
        json({{"file", bad}, {"line", 2}, {"column", 8}, {"message", "`edits` must be a list of edits, got `3`"}}));
  auto unread = error_document(env.sp({"--json", "plan", env.tmp.path + "/nope.yaml"}), "recipe", 2);
  CHECK(unread["error"]["diagnostics"][0]["line"].is_null());
  CHECK(unread["error"]["diagnostics"][0]["column"].is_null());

  // The run: an environment that is not there, a patch that is not applied.
  auto nowhere = testsupport::run_sitepatch({"--json", "--venv", env.tmp.path + "/nowhere", "list"});
  error_document(nowhere, "usage", 2);  // as no environment given: the caller's to fix
  auto show = error_document(env.sp({"--json", "show", "nope"}), "failed", 1);
  CHECK(show["error"]["message"] == "no applied patch `nope` (nothing is applied)");
  // Without --json, stdout stays empty.
  CHECK(env.sp({"show", "nope"}).out.empty());
}

TEST_CASE("recipe schemas: every shipped and tested recipe, rules and hints file validates", "[e2e][json]") {
  std::string src = SITEPATCH_SOURCE_DIR;
  // Each shipped file names its schema on its first line, for editors (yaml-language-server).
  for (auto& [file, schema] : std::vector<std::pair<std::string, std::string>>{
           {"recipes/flashinfer-dynamo.yaml", "recipe.schema.json"},
           {"recipes/rules/dynamo.yaml", "rules.schema.json"},
           {"recipes/hints/dynamo.yaml", "hints.schema.json"}}) {
    INFO(file);
    std::string text = testsupport::slurp(src + "/" + file);
    std::string first = text.substr(0, text.find('\n'));
    CHECK(first.rfind("# yaml-language-server: $schema=", 0) == 0);
    CHECK(fs::canonical(fs::path(src + "/" + file).parent_path() / first.substr(first.find('=') + 1)) ==
          fs::canonical(schema_dir() + "/" + schema));
    CHECK(violations(schema, text, true) == "");
  }
  // ... and sitepatch reads them with that line.
  auto rules = testsupport::run_sitepatch({"rules", "--no-default-rules", "--rules", src + "/recipes/rules/dynamo.yaml"});
  CHECK(rules.status == 0);
  auto hints = testsupport::run_sitepatch({"explain", "--list-hints", "--hints", src + "/recipes/hints/dynamo.yaml"});
  CHECK(hints.status == 0);

  size_t n = 0;
  for (const char* golden : {"actions.txt", "errors.txt"})
    for (auto& recipe : golden_recipes(src + "/tests/golden/" + golden)) {
      INFO(golden << ":\n" << recipe);
      CHECK(violations("recipe.schema.json", recipe, true) == "");
      ++n;
    }
  CHECK(n >= 14);
  // A number or a boolean as the new value: YAML reads it so, and sitepatch takes it.
  for (std::string value : {"255", "false"}) {
    std::string recipe = "id: n\nedits:\n  - module: m\n    variable: LIMIT\n    set-value: " + value + "\n";
    CHECK(violations("recipe.schema.json", recipe, true) == "");
    CHECK(sitepatch::recipe::parse(recipe, "n.yaml").edits.at(0).code == value);
  }
}

TEST_CASE("recipe schemas: what sitepatch refuses, the schema refuses too", "[e2e][json]") {
  testsupport::TempDir tmp;
  struct Bad {
    std::string text, error;
  };
  for (auto& c : std::vector<Bad>{
           {"id: x\nedits:\n  - module: a.b\n    function: f\n    replace-bdy: pass\n",
            "bad.yaml:5:5: unknown key `replace-bdy`; did you mean `replace-body`?"},
           {"id: x\nedits: 3\n", "bad.yaml:2:8: `edits` must be a list of edits, got `3`"},
           {"id: x\ndescription: no edits\n", "bad.yaml:1:1: missing required key `edits`"},
           {"id: x\nedits:\n  - module: a\n    function: f\n    replace-body: pass\n    add-decorator: d\n",
            "bad.yaml:6:5: edit 1 has more than one action (`replace-body`, `add-decorator`); give one per edit"},
           {"id: x\nedits:\n  - module: a\n    function: f\n    replace: {old: a, new: b, count: 0}\n",
            "bad.yaml:5:38: `count` must be an integer >= 1, got `0`"},
           {"id: X Y\nedits:\n  - module: a\n    ensure-import: import os\n",
            "bad.yaml:1:5: `id` must match [a-z0-9][a-z0-9._-]*, got `X Y`"},
           {"id: x\nedits:\n  - module: a\n    function: f\n    register-custom-op: return x\n    op-name: quantize\n",
            "bad.yaml:6:14: `op-name` must be `namespace::name` (letters, digits, _), got `quantize`"},
           {"id: x\nedits:\n  - module: a\n    function: f\n    add-decorator: d\n    op-schema: (Tensor x) -> Tensor\n",
            "bad.yaml:6:5: `op-schema` goes only with `register-custom-op`"},
           {"id: x\nedits:\n  - module: a\n    function: f\n    register-custom-op: return x\n    op-schema: Tensor x\n",
            "bad.yaml:6:16: `op-schema` must be a torch schema on one line, as `(Tensor x) -> Tensor`, got `Tensor x`"},
           {"id: x\nedits:\n  - module: a\n    function: f\n    insert-before: log(x)\n",
            "bad.yaml:5:5: `insert-before` needs `anchor`: the statement of the function's body the code goes above"},
           {"id: x\nedits:\n  - module: a\n    class: C\n    insert-after: x = 1\n    anchor: y = 2\n",
            "bad.yaml:6:5: `anchor` is a statement of a function's body: it works on a `function`, not a `class`"},
           {"id: x\nedits:\n  - module: a\n    function: f\n    replace-body: pass\n    anchor: y = 2\n",
            "bad.yaml:6:5: `anchor` goes only with `insert-before` or `insert-after`"},
       }) {
    INFO(c.text);
    std::string path = tmp.path + "/bad.yaml";
    testsupport::spit(path, c.text);
    CHECK(violations("recipe.schema.json", c.text, true) != "");
    // Recipes are read before the environment is opened: none is needed to refuse one.
    auto r = testsupport::run_sitepatch({"--venv", tmp.path, "plan", path});
    CHECK(r.status == 2);
    CHECK(r.err.find(tmp.path + "/" + c.error) != std::string::npos);
  }
  std::string rules = tmp.path + "/rules.yaml";
  testsupport::spit(rules, "rules:\n  - id: r\n    match: a.b\n    category: c\n    mesage: m\n");
  CHECK(violations("rules.schema.json", testsupport::slurp(rules), true) != "");
  CHECK(testsupport::run_sitepatch({"rules", "--rules", rules}).status == 2);
  std::string hints = tmp.path + "/hints.yaml";
  testsupport::spit(hints, "hints:\n  - id: h\n    operation: posix.stat\n");
  CHECK(violations("hints.schema.json", testsupport::slurp(hints), true) != "");
  CHECK(testsupport::run_sitepatch({"explain", "--list-hints", "--hints", hints}).status == 2);

  // An ignore file: each entry a rule, a reason, and a function or a place.
  CHECK(violations("ignore.schema.json",
                   "ignore:\n  - rule: subprocess\n    function: rp.jit.cpp_ext:ver\n    reason: asked once\n"
                   "  - rule: open\n    at: rp/alarms.py:24\n    reason: the user's files\n",
                   true) == "");
  std::string ignore = tmp.path + "/ignore.yaml";
  testsupport::spit(ignore, "ignore:\n  - rule: open\n    at: rp/alarms.py\n    reason: x\n");
  CHECK(violations("ignore.schema.json", testsupport::slurp(ignore), true) != "");
  auto refused = testsupport::run_sitepatch({"audit", "--path", tmp.path, "--ignore", ignore});
  CHECK(refused.status == 2);
  CHECK(refused.err.find("`at` must be FILE.py:LINE, got `rp/alarms.py`") != std::string::npos);
}

TEST_CASE("json schema: edit and capture documents", "[e2e][json]") {
  e2e::DemoEnv env;
  auto saved = document(env.sp({"--json", "edit", "flashinfer-python"}), "edit", 0);
  CHECK(saved["commit"].get<std::string>().size() == 40);
  CHECK(saved["copy"].is_null());
  CHECK(saved["folders"][0] == env.venv.site_packages + "/flashinfer");
  std::string rel = "flashinfer/jit/cpp_ext.py";
  std::string text = env.read(rel);
  size_t at = text.find("def get_cuda_version");
  REQUIRE(at != std::string::npos);
  testsupport::spit(env.site(rel), text.substr(0, at) + "@functools.cache\n" + text.substr(at));
  auto dry = document(env.sp({"--json", "capture", "flashinfer-python", "--dry-run"}), "capture", 0);
  CHECK(dry["commit"].is_null());
  CHECK(dry["recipe_path"].is_null());
  CHECK(dry["captured"][0]["path"] == rel);
  CHECK(dry["captured"][0]["original"] == "the history (sitepatch edit)");
  CHECK(dry["recipe"].get<std::string>().find("add-decorator: functools.cache") != std::string::npos);
  std::string out = env.tmp.path + "/captured.yaml";
  auto done = document(env.sp({"--json", "capture", "flashinfer-python", "-o", out}), "capture", 0);
  CHECK(done["written"] == true);
  CHECK(done["recipe_path"] == out);
  CHECK(done["id"] == "flashinfer-python-local");
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
}

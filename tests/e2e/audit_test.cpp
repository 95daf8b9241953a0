// sitepatch audit and sitepatch rules on a real venv: demo-jit's quantize() reaches
// subprocess through a re-export, a cached function, a class method inherited from a
// base, a function called while building a dict, and a second distribution (jitbase); with a
// cycle, a function reached twice and two calls no static analysis can resolve.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/process.hpp"

namespace {

struct AuditEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  AuditEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    std::string wheels = tmp.path + "/wheels";
    venv.install({e2e::data_wheel("demo-jit", "1.0", wheels), e2e::data_wheel("jitbase", "2.0", wheels)});
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  std::string file(const std::string& name, const std::string& text) const {
    testsupport::spit(tmp.path + "/" + name, text);
    return tmp.path + "/" + name;
  }
};

// Every chain, shortest first; each step's line is where it makes the next call.
const char* const kChains =
    "\n"
    "[1] open (file-io, warning: opens a file) [open: docs/guide/rules.md#open]\n"
    "    demo.api:quantize             demo/api.py:7\n"
    "    demo.jit.spec:prepare         demo/jit/spec.py:16\n"
    "\n"
    "[2] subprocess.run (process, error: spawns a process, which dynamo cannot trace) [subprocess: docs/guide/rules.md#subprocess]\n"
    "    demo.api:quantize             demo/api.py:6\n"
    "    demo.jit.spec:get_module      demo/jit/spec.py:12\n"
    "    demo.jit.loader:Loader.load   demo/jit/loader.py:21\n"
    "    demo.jit.loader:Base.compile  demo/jit/loader.py:13\n"
    "    jitbase.tools:run_compiler    jitbase/tools.py:6\n"
    "\n"
    "[3] subprocess.check_output (process, error: spawns a process, which dynamo cannot trace) [subprocess: docs/guide/rules.md#subprocess]\n"
    "    demo.api:quantize             demo/api.py:6\n"
    "    demo.jit.spec:get_module      demo/jit/spec.py:11\n"
    "    demo.jit.spec:build_spec      demo/jit/spec.py:21\n"
    "    demo.jit.spec:finish          demo/jit/spec.py:35\n"
    "    demo.jit.loader:check_tools   demo/jit/loader.py:26\n"
    "    jitbase.tools:check_tools     jitbase/tools.py:10\n"
    "\n"
    "13 functions in 7 modules walked; 1 cycle in the call graph\n";

}  // namespace

TEST_CASE("audit MODULE:FUNCTION prints every chain to a flagged operation", "[e2e][audit]") {
  AuditEnv env;
  auto r = env.sp({"audit", "demo.api:quantize"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == "demo.api:quantize reaches 3 flagged operations; 2 calls could not be followed (-v lists them), "
                 "so there may be more\n" + std::string(kChains));

  // -v lists the calls it could not follow, and the cycle.
  auto v = env.sp({"-v", "audit", "demo.api:quantize"});
  CHECK(v.out == "demo.api:quantize reaches 3 flagged operations; 2 calls could not be followed (listed below), "
                 "so there may be more\n" + std::string(kChains) +
                     "2 calls could not be followed:\n"
                     "    demo/api.py:8  demo.api:quantize  module.run  (what get_module() returns is not known)\n"
                     "    demo/jit/loader.py:22  demo.jit.loader:Loader.load  getattr(self, \"module\")  (attribute `module`: nothing this analysis follows assigns it)\n"
                     "cycle: demo.jit.spec:default_flags -> demo.jit.spec:more_flags -> demo.jit.spec:default_flags\n");

  // --depth 2 keeps the chains of at most two calls.
  auto d = env.sp({"-q", "audit", "demo.api:quantize", "--depth", "2"});
  CHECK(d.out ==
        "\n[1] open (file-io, warning: opens a file) [open: docs/guide/rules.md#open]\n"
        "    demo.api:quantize      demo/api.py:7\n"
        "    demo.jit.spec:prepare  demo/jit/spec.py:16\n");
}

TEST_CASE("audit --json prints the chains as data", "[e2e][audit]") {
  AuditEnv env;
  auto r = env.sp({"--json", "audit", "demo.api:quantize"});
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == true);
  REQUIRE(j["chains"].size() == 3);
  auto& c = j["chains"][1];
  CHECK(c["operation"] == "subprocess.run");
  CHECK(c["rule"]["id"] == "subprocess");
  CHECK(c["steps"].size() == 5);
  CHECK(c["steps"][3] == nlohmann::json({{"function", "demo.jit.loader:Base.compile"}, {"module", "demo.jit.loader"},
                                         {"qualified", "Base.compile"}, {"file", "demo/jit/loader.py"}, {"line", 13}, {"via", nullptr}}));
  CHECK(j["unresolved"].size() == 2);
  CHECK(j["cycles"] == nlohmann::json::parse(R"([["demo.jit.spec:default_flags", "demo.jit.spec:more_flags"]])"));
  CHECK(j["functions"] == 13);
}

TEST_CASE("audit --suggest prints a recipe that plan accepts", "[e2e][audit]") {
  AuditEnv env;
  // Without torch, every suggested `import torch` would break the patched modules.
  auto none = env.sp({"audit", "demo.api:quantize", "--suggest"});
  CHECK(none.status == 1);
  CHECK(none.out.empty());
  CHECK(none.err == "sitepatch: nothing to suggest: torch is not importable in " + env.venv.root +
                        ", and each suggested edit (torch.compiler.disable) needs it; audit the environment the "
                        "model runs in\n");
  env.venv.install({e2e::data_wheel("torch", "2.9.0", env.tmp.path + "/wheels")});
  auto r = env.sp({"audit", "demo.api:quantize", "--suggest"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  // The nearest function of each chain that demo-jit owns (jitbase's are not ours to patch).
  CHECK(r.out ==
        "# Suggested by `sitepatch audit demo.api:quantize --suggest`: review before applying.\n"
        "# Each edit keeps dynamo (torch.compile) out of the nearest function of demo-jit\n"
        "# on a chain from demo.api:quantize to an operation it cannot trace.\n"
        "id: demo-jit-dynamo\n"
        "description: Keep torch.compile out of what demo.api:quantize reaches\n"
        "# requires: the installed version, up to its next minor release\n"
        "requires: demo-jit>=1.0,<1.1\n"
        "edits:\n"
        "  # reaches open (demo/jit/spec.py:16)\n"
        "  - module: demo.jit.spec\n"
        "    function: prepare\n"
        "    add-decorator: torch.compiler.disable\n"
        "    ensure-import: import torch\n"
        "  # reaches subprocess.run (jitbase/tools.py:6)\n"
        "  - module: demo.jit.loader\n"
        "    function: Base.compile\n"
        "    add-decorator: torch.compiler.disable\n"
        "    ensure-import: import torch\n"
        "  # reaches subprocess.check_output (jitbase/tools.py:10)\n"
        "  - module: demo.jit.loader\n"
        "    function: check_tools\n"
        "    add-decorator: torch.compiler.disable\n"
        "    ensure-import: import torch\n");
  std::string recipe = env.file("suggested.yaml", r.out);
  auto plan = env.sp({"plan", recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);
  CHECK(plan.out.find("+    @torch.compiler.disable\n     def compile(self, spec):") != std::string::npos);
}

TEST_CASE("audit --package lists every function that directly performs a flagged operation", "[e2e][audit]") {
  AuditEnv env;
  // Counted by hand from tests/data/packages/demo-jit-1.0. demo/jit/__init__.py is not
  // parsed: `loader` holds `load` (torch.utils.cpp_extension.load) only inside a word.
  auto r = env.sp({"audit", "--package", "demo-jit"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "demo/jit/loader.py:8:9: warning: demo.jit.loader (module level): threading.Lock [locking] [threading-lock: docs/guide/rules.md#threading-lock]\n"
        "demo/jit/spec.py:16:5: warning: demo.jit.spec:prepare: open [file-io] [open: docs/guide/rules.md#open]\n"
        "demo/jit/spec.py:40:16: info: demo.jit.spec:read_spec.cached: os.path.exists [file-io] [os-path-exists: docs/guide/rules.md#os-path-exists]\n"
        "demo/jit/spec.py:42:24: warning: demo.jit.spec:read_spec: pathlib.Path.read_text [file-io] [pathlib-io: docs/guide/rules.md#pathlib-io]\n"
        "4 flagged calls in 3 functions and 1 at module level in 2 files of 5 (3 parsed after the text pre-filter)\n");

  // `from subprocess import check_output as _out; _out(...)` is subprocess.check_output.
  auto m = env.sp({"audit", "--module", "jitbase"});
  CHECK(m.out ==
        "jitbase/tools.py:6:12: error: jitbase.tools:run_compiler: subprocess.run [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "jitbase/tools.py:10:12: error: jitbase.tools:check_tools: subprocess.check_output [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "2 flagged calls in 2 functions in 1 file of 2 (1 parsed after the text pre-filter)\n");

  auto all = env.sp({"--json", "audit", "--all"});
  auto j = nlohmann::json::parse(all.out);
  CHECK(j["calls"] == 6);
  CHECK(j["functions"] == 5);
  CHECK(j["module_level_calls"] == 1);

  // --path needs no environment: any folder of sources.
  auto p = testsupport::run_sitepatch({"audit", "--path", env.venv.site_packages + "/jitbase"});
  CHECK(p.out ==
        "tools.py:6:12: error: tools:run_compiler: subprocess.run [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "tools.py:10:12: error: tools:check_tools: subprocess.check_output [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "2 flagged calls in 2 functions in 1 file of 2 (1 parsed after the text pre-filter)\n");
}

TEST_CASE("audit errors name what failed", "[e2e][audit]") {
  AuditEnv env;
  auto r = env.sp({"audit", "demo.api:quantise"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: function `quantise` is not defined in module demo.api (demo/api.py); "
                 "did you mean quantize?\n");
  r = env.sp({"audit", "demo.apy:quantize"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: module `demo.apy` not found in the environment; did you mean demo.api, demo.jit?\n");
  r = env.sp({"audit", "--package", "demo-jt"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: distribution `demo-jt` is not installed in " + env.venv.root +
                     "; did you mean demo-jit?\n");
  r = env.sp({"audit", "--module", "demo.jitt"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: module `demo.jitt` not found in " + env.venv.site_packages + "\n");
  r = testsupport::run_sitepatch({"audit", "--path", env.tmp.path + "/nowhere"});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: --path " + env.tmp.path + "/nowhere: no such folder\n");
  r = env.sp({"audit", "demo.api.quantize"});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: entry `demo.api.quantize`: no module `demo.api.quantize` in the environment; "
                 "did you mean demo.api:quantize?\n");
  r = env.sp({"audit", "nothing.here"});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: entry `nothing.here`: no module `nothing.here` in the environment; an entry is "
                 "MODULE or MODULE:FUNCTION, e.g. flashinfer.fp4_quantization:fp4_quantize\n");
  r = env.sp({"audit", "demo.api:quantize", "--package", "demo-jit"});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: audit needs exactly one of MODULE[:FUNCTION], --package, --module, --all, --path\n");
  r = env.sp({"audit", "--all", "--suggest"});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: --suggest applies to MODULE[:FUNCTION] only\n");
}

TEST_CASE("rules files: added, listed, and refused with file:line:col", "[e2e][audit]") {
  AuditEnv env;
  std::string mine = env.file("mine.yaml",
                              "rules:\n"
                              "  - id: jit-build\n"
                              "    match: jitbase.tools.run_compiler\n"
                              "    category: jit\n"
                              "    message: builds a kernel\n");
  // A rule on a function of the environment stops the chain there.
  // One file per --rules: the entry after it stays the entry.
  auto r = env.sp({"-q", "audit", "--rules", mine, "demo.api:quantize", "--no-default-rules"});
  CHECK(r.out ==
        "\n[1] jitbase.tools.run_compiler (jit, warning: builds a kernel) [jit-build]\n"
        "    demo.api:quantize             demo/api.py:6\n"
        "    demo.jit.spec:get_module      demo/jit/spec.py:12\n"
        "    demo.jit.loader:Loader.load   demo/jit/loader.py:21\n"
        "    demo.jit.loader:Base.compile  demo/jit/loader.py:13\n");
  // A rule's doc: is named beside each finding, in the walk and the scan.
  std::string documented = env.file("documented.yaml",
                                    "rules:\n"
                                    "  - id: jit-build\n"
                                    "    match: jitbase.tools.run_compiler\n"
                                    "    category: jit\n"
                                    "    message: builds a kernel\n"
                                    "    doc: https://wiki.example.com/jit#builds\n");
  auto doc = env.sp({"-q", "audit", "--rules", documented, "demo.api:quantize", "--no-default-rules"});
  CHECK(doc.out.find("[1] jitbase.tools.run_compiler (jit, warning: builds a kernel) "
                     "[jit-build: https://wiki.example.com/jit#builds]\n") != std::string::npos);
  auto doc_json = nlohmann::json::parse(
      env.sp({"--json", "audit", "--rules", documented, "demo.api:quantize", "--no-default-rules"}).out);
  CHECK(doc_json["chains"][0]["rule"]["doc"] == "https://wiki.example.com/jit#builds");

  auto list = testsupport::run_sitepatch({"rules", "--no-default-rules", "--rules", mine});
  REQUIRE(list.status == 0);
  CHECK(list.out ==
        "ID         MATCH                       CATEGORY  SEVERITY  FROM\n"
        "jit-build  jitbase.tools.run_compiler  jit       warning   " + mine + ":2\n");
  // The shipped set: a header and 45 rules, the user's last.
  auto shipped = testsupport::run_sitepatch({"rules", "--rules", mine});
  auto lines = sitepatch::util::split(shipped.out, '\n');
  REQUIRE(lines.size() == 48);
  CHECK(sitepatch::util::starts_with(lines[1], "subprocess  "));
  CHECK(sitepatch::util::ends_with(lines[46], mine + ":2"));
  auto json = nlohmann::json::parse(testsupport::run_sitepatch({"--json", "rules", "--no-default-rules", "--rules", mine}).out);
  CHECK(json["rules"] == nlohmann::json::parse(R"([{"id": "jit-build", "match": "jitbase.tools.run_compiler",
      "category": "jit", "message": "builds a kernel", "severity": "warning", "origin": ")" + mine + R"(", "line": 2,
      "probe": null, "doc": null, "calibration": null}])"));

  std::string bad = env.file("bad.yaml", "rules:\n  - id: x\n    match: a..b\n    category: c\n    message: m\n");
  auto e = env.sp({"audit", "demo.api:quantize", "--rules", bad});
  CHECK(e.status == 2);
  CHECK(e.err == "sitepatch: error: invalid rules file\n" + bad +
                     ":3:12: rule 1: `match` must be a dotted name whose segments are names, `*` or `{a,b,...}` (one of those names), got `a..b`\n");
  e = testsupport::run_sitepatch({"rules", "--rules", env.tmp.path + "/none.yaml"});
  CHECK(e.status == 2);
  CHECK(e.err == "sitepatch: error: cannot read rules file " + env.tmp.path + "/none.yaml: No such file or directory\n");
}

TEST_CASE("the shipped rules flag print, logging, a Logger's methods and Tensor.item/.tolist in a compiled path",
          "[e2e][audit]") {
  AuditEnv env;
  testsupport::spit(env.venv.site_packages + "/chatty.py",
                    "import logging\n"
                    "import torch\n"
                    "\n"
                    "log = logging.getLogger(__name__)\n"
                    "\n"
                    "\n"
                    "def scale(x: torch.Tensor) -> torch.Tensor:\n"
                    "    print('scaling', x.shape)\n"
                    "    log.info('scale %s', x.shape)\n"
                    "    logging.debug('x')\n"
                    "    n = x.item()\n"
                    "    v = x.float().tolist()\n"
                    "    return x * n + len(v)\n");
  auto r = env.sp({"--json", "audit", "chatty:scale"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);  // warnings: below --fail-on's default (error)
  std::map<std::string, std::pair<std::string, std::string>> found;  // operation -> rule, line
  auto doc = nlohmann::json::parse(r.out);
  for (auto& c : doc["chains"])
    found[c["operation"]] = {c["rule"]["id"], std::to_string(c["steps"].back()["line"].get<int>())};
  CHECK(found == std::map<std::string, std::pair<std::string, std::string>>{
                     {"print", {"print", "8"}},
                     {"logging.Logger.info", {"logger-method", "9"}},
                     {"logging.debug", {"logging-call", "10"}},
                     {"torch.Tensor.item", {"tensor-item", "11"}},
                     {"torch.Tensor.tolist", {"tensor-tolist", "12"}}});
}

TEST_CASE("audit --path stays in its folder: links out are not followed but said, names are escaped",
          "[e2e][audit]") {
  testsupport::TempDir tmp;
  const std::string flagged = "import subprocess\n\n\ndef f():\n    subprocess.run(['x'])\n";
  std::string tree = tmp.path + "/tree";
  testsupport::spit(tree + "/ok.py", flagged);
  testsupport::spit(tree + "/sub/deep.py", flagged);
  // A name that would paint the terminal red.
  testsupport::spit(tree + "/\x1b[31mred.py", flagged);
  // Outside the tree: a folder and a file with findings of their own.
  testsupport::spit(tmp.path + "/outside/leak.py", flagged);
  // Links out (to a folder, to a file, to /: the whole file system), and links inside
  // (to a sibling, and to a folder above, a loop): those are read once.
  std::filesystem::create_directory_symlink(tmp.path + "/outside", tree + "/out");
  std::filesystem::create_symlink(tmp.path + "/outside/leak.py", tree + "/leak.py");
  std::filesystem::create_directory_symlink("/", tree + "/sub/root");
  std::filesystem::create_directory_symlink("sub", tree + "/again");
  std::filesystem::create_directory_symlink("..", tree + "/sub/up");

  auto r = testsupport::run_sitepatch({"audit", "--path", tree});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "\\x1b[31mred.py:5:5: error: \\x1b[31mred:f: subprocess.run [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "ok.py:5:5: error: ok:f: subprocess.run [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "sub/deep.py:5:5: error: sub.deep:f: subprocess.run [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "3 flagged calls in 3 functions in 3 files of 3 (3 parsed after the text pre-filter); "
        "3 links leading out of the folder not followed (leak.py, out, sub/root)\n");
  CHECK(r.out.find('\x1b') == std::string::npos);
}

TEST_CASE("audit --callgraph writes what the walk saw as JSON, valid under its schema", "[e2e][audit]") {
  AuditEnv env;
  std::string out = env.tmp.path + "/graph.json";
  auto r = env.sp({"audit", "demo.api:quantize", "--callgraph", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("call graph of demo.api:quantize -> " + out + "\n") != std::string::npos);
  auto text = testsupport::slurp(out);
  auto g = nlohmann::json::parse(text);
  CHECK(g["schema"] == 1);
  CHECK(g["entry"] == "demo.api:quantize");
  CHECK(g["complete"] == false);
  auto& fns = g["functions"];
  CHECK(fns.size() == 13);  // every function walked, as the report counts them
  auto& entry = fns["demo.api:quantize"];
  CHECK(entry["file"] == "demo/api.py");
  auto& calls = entry["calls"];
  CHECK(std::find(calls.begin(), calls.end(),
                  nlohmann::json({{"function", "demo.jit.spec:get_module"}, {"line", 6}, {"via", nullptr}})) != calls.end());
  CHECK(entry["unfollowed"].size() == 1);
  CHECK(entry["unfollowed"][0]["call"] == "module.run");
  CHECK(fns["demo.jit.spec:prepare"]["operations"] ==
        nlohmann::json::parse(R"([{"operation": "open", "rule": "open", "severity": "warning", "line": 16}])"));
  // Every call names a function that is a key: the graph is closed.
  for (auto& [name, f] : fns.items())
    for (auto& c : f["calls"]) CHECK(fns.contains(c["function"].get<std::string>()));
  auto v = sitepatch::util::run({"/usr/bin/python3", std::string(SITEPATCH_SOURCE_DIR) + "/tests/support/validate_schema.py",
                                 std::string(SITEPATCH_SOURCE_DIR) + "/docs/schema/callgraph.json", out});
  CHECK(v.out == "");
  CHECK(v.status == 0);

  auto scan = env.sp({"audit", "--package", "demo-jit", "--callgraph", out});
  CHECK(scan.status == 2);
  CHECK(scan.err == "sitepatch: error: --callgraph applies to MODULE[:FUNCTION] only (a scan follows no calls)\n");
}

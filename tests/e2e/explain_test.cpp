// sitepatch explain on a real venv holding fakeinfer (the package the real logs in
// tests/data/dynamo-logs were made against, built into a wheel here): every frame
// mapped to its function, the founding story's two fixes proposed, the recipe through
// plan and apply, a package changed since the log reported stale, and the exit codes.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "dynamo_log_fixtures.hpp"
#include "e2e_support.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

namespace {

std::string log_path(const std::string& name) {
  return std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/" + name;
}

// torch's stand-in (tests/data/packages/torch-2.9.0) with the one name fakeinfer's
// annotations need at import, so the patched package runs.
std::string torch_wheel(const std::string& out) {
  auto files = e2e::read_tree(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/torch-2.9.0");
  files["torch/__init__.py"] += "\n\nclass Tensor:\n    pass\n";
  return testsupport::build_wheel({"torch", "2.9.0", files}, out);
}

struct ExplainEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  // fakeinfer as the logs saw it; torch's stand-in, so the patched code runs.
  explicit ExplainEnv(bool install = true) : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    if (install)
      venv.install({e2e::data_wheel("fakeinfer", "0.1.0", tmp.path + "/wheels"), torch_wheel(tmp.path + "/wheels")});
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  // The logs are read by name from their folder, so messages name them as users type them.
  sitepatch::util::RunResult explain(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"--venv", venv.root};
    argv.insert(argv.end(), args.begin(), args.end());
    return testsupport::run_sitepatch(argv);
  }
};

// The founding story, told by graph_breaks.txt: both breaks, every frame mapped.
const char* const kGraphBreaks = R"(2 breaks in the log, 2 inside libraries

[1] _thread.allocate_lock: creates a lock (threading.Lock); subprocess.Popen makes one for every process it starts
    reached through subprocess.check_output (audit rule subprocess, error); seen 3 times
    dynamo: Attempted to call function marked as skipped (LOG:5, graph_breaks)
    graph break GB0007: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    your code at model.py:8 (forward) calls into fakeinfer 0.1.0:
      fakeinfer.jit.cpp_ext:is_cuda_version_at_least  function          fakeinfer 0.1.0  fakeinfer/jit/cpp_ext.py:31
      fakeinfer.jit.cpp_ext:get_cuda_version          function          fakeinfer 0.1.0  fakeinfer/jit/cpp_ext.py:19
      subprocess:check_output                         standard library                   subprocess.py:466
      subprocess:run                                  standard library                   subprocess.py:548
      subprocess:__init__                             standard library                   subprocess.py:828
    fix: replace-body of fakeinfer.jit.cpp_ext:get_cuda_version (hint cuda-version-from-torch)
        return Version(torch.version.cuda)
      why: returns the CUDA version torch was built with (torch.version.cuda) instead of running `nvcc --version`; traceable, so no graph break is left
      cost: get_cuda_version no longer does what its old body did (subprocess.check_output): check that the new body means the same where the model runs
    after the fix, from fakeinfer.jit.cpp_ext:is_cuda_version_at_least: no other chain reaches a flagged operation in 5 functions walked; every call on the way was resolved

[2] posix.stat: reads file-system metadata (os.stat), as os.path.exists, os.path.isfile and pathlib.Path.exists do
    reached through os.path.exists (audit rule os-path-exists, info); seen twice
    dynamo: Attempted to call function marked as skipped (LOG:63, graph_breaks)
    graph break GB0007: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    your code at model.py:10 (forward) calls into fakeinfer 0.1.0:
      fakeinfer.fp4_quantization:fp4_quantize                 function          fakeinfer 0.1.0  fakeinfer/fp4_quantization.py:15
      (getattr_and_trace)                                     torch's own                        torch/_dynamo/polyfills/__init__.py:392
      fakeinfer.fp4_quantization:get_fp4_quantization_module  function          fakeinfer 0.1.0  fakeinfer/fp4_quantization.py:11
      fakeinfer.jit.cpp_ext:load_module                       function          fakeinfer 0.1.0  fakeinfer/jit/cpp_ext.py:36
      genericpath:exists                                      standard library                   <frozen genericpath>:19
    fix: add-decorator torch.compiler.disable on fakeinfer.fp4_quantization:fp4_quantize
      why: keeps dynamo out of fp4_quantize and everything it calls
      cost: torch.compiler.disable makes fp4_quantize opaque: dynamo runs it eagerly, and the call to it is a graph break of its own, so torch.compile(fullgraph=True) still fails there ("Skip calling torch.compiler.disable()d function"); without fullgraph the model runs with one graph break at fp4_quantize
    after the fix, from fakeinfer.fp4_quantization:fp4_quantize: 2 other chains reach flagged operations, none left: each is inside a function the fixes replace or disable (a narrower fix would meet them next); 2 calls could not be followed (-v lists them), so there may be more:
      open (open, warning): not traced: inside fakeinfer.fp4_quantization:fp4_quantize, which the fix disables
        fakeinfer.fp4_quantization:fp4_quantize -> fakeinfer.fp4_quantization:get_fp4_quantization_module -> fakeinfer.jit.cpp_ext:load_module (fakeinfer/jit/cpp_ext.py:37)
      subprocess.check_output (subprocess, error): gone: the fix replaces fakeinfer.jit.cpp_ext:get_cuda_version's body
        fakeinfer.fp4_quantization:fp4_quantize -> fakeinfer.jit.cpp_ext:is_cuda_version_at_least -> fakeinfer.jit.cpp_ext:get_cuda_version (fakeinfer/jit/cpp_ext.py:19)

from your code, forward (model.py, breaks [1], [2]): not walked: /home/ml/serve/model.py is not on this machine, so the walks start at the library
)";

const char* const kRecipe = R"(# Proposed by `sitepatch explain LOG`: review before applying.
# Each edit answers a graph break the log shows inside a library, or one the walk from your
# code finds next (dynamo stopped before it); its cost is above it.
id: fakeinfer-dynamo-get-cuda-version-fp4-quantize
description: Let torch.compile through the graph breaks of LOG
# requires: the version the log was made against, up to its next minor release
requires: fakeinfer>=0.1.0,<0.2
edits:
  # answers [1] _thread.allocate_lock through subprocess.check_output (hint cuda-version-from-torch)
  # cost: get_cuda_version no longer does what its old body did (subprocess.check_output): check that the new body means the same where the model runs
  - module: fakeinfer.jit.cpp_ext
    function: get_cuda_version
    replace-body: |
      return Version(torch.version.cuda)
    ensure-import: import torch
  # answers [2] posix.stat through os.path.exists
  # cost: torch.compiler.disable makes fp4_quantize opaque: dynamo runs it eagerly, and the call to it is a graph break of its own, so torch.compile(fullgraph=True) still fails there ("Skip calling torch.compiler.disable()d function"); without fullgraph the model runs with one graph break at fp4_quantize
  - module: fakeinfer.fp4_quantization
    function: fp4_quantize
    add-decorator: torch.compiler.disable
    ensure-import: import torch
)";

std::string with_log(std::string text, const std::string& log) {
  for (size_t at = text.find("LOG"); at != std::string::npos; at = text.find("LOG", at + log.size()))
    text.replace(at, 3, log);
  return text;
}

// The frames of break `b` of a --json answer: "module:qualified (what) dist version" per library frame.
std::vector<std::string> library_frames(const nlohmann::json& j, size_t b) {
  std::vector<std::string> out;
  for (auto& f : j["breaks"][b]["frames"]) {
    if (f["kind"] != "library") continue;
    if (!f["mapped"].get<bool>()) {
      out.push_back("unmapped " + f["path"].get<std::string>());
      continue;
    }
    out.push_back(f["module"].get<std::string>() + ":" + f["qualified"].get<std::string>() + " (" +
                  f["what"].get<std::string>() + ") " + f["distribution"]["name"].get<std::string>() + " " +
                  f["distribution"]["version"].get<std::string>());
  }
  return out;
}

}  // namespace

TEST_CASE("explain maps every frame of graph_breaks.txt and proposes the founding story's two fixes", "[e2e][explain]") {
  ExplainEnv env;
  std::string log = log_path("graph_breaks.txt");
  auto r = env.explain({"explain", log});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(r.out == with_log(kGraphBreaks, log) + "\nrecipe (--recipe FILE writes it, for plan and apply):\n" + [&] {
          std::string indented;
          for (auto& l : sitepatch::util::split(with_log(kRecipe, log), '\n'))
            if (!l.empty()) indented += "  " + l + "\n";
          return indented;
        }());

  // -v lists the calls the walks could not follow (`f.read` of `with open(...) as f` is followed).
  auto v = env.explain({"-v", "explain", log});
  CHECK(v.out.find("      not followed: fakeinfer/fp4_quantization.py:18  fakeinfer.fp4_quantization:fp4_quantize  "
                   "input.to  (attribute `to` of parameter `input`, whose value is not known)\n") != std::string::npos);
  CHECK(v.out.find("f.read") == std::string::npos);
}

TEST_CASE("explain maps the frames of every log to functions, methods and their distribution", "[e2e][explain]") {
  ExplainEnv env;
  const std::vector<std::string> cuda = {
      "fakeinfer.jit.cpp_ext:is_cuda_version_at_least (function) fakeinfer 0.1.0",
      "fakeinfer.jit.cpp_ext:get_cuda_version (function) fakeinfer 0.1.0"};
  const std::vector<std::string> stat = {
      "fakeinfer.fp4_quantization:fp4_quantize (function) fakeinfer 0.1.0",
      "fakeinfer.fp4_quantization:get_fp4_quantization_module (function) fakeinfer 0.1.0",
      "fakeinfer.jit.cpp_ext:load_module (function) fakeinfer 0.1.0"};
  const std::vector<std::string> gemm = {"fakeinfer.gemm:fp4_gemm (function) fakeinfer 0.1.0",
                                         "fakeinfer.gemm:get_gemm_module (function) fakeinfer 0.1.0",
                                         "fakeinfer.jit.core:JitSpec.build_and_load (method) fakeinfer 0.1.0"};
  struct Case {
    const char* log;
    std::vector<std::vector<std::string>> breaks;
    std::vector<std::string> through;
  };
  for (const Case& c : std::vector<Case>{
           {"fullgraph.txt", {cuda}, {"subprocess.check_output"}},
           {"fullgraph_verbose.txt", {cuda}, {"subprocess.check_output"}},
           {"graph_breaks.txt", {cuda, stat}, {"subprocess.check_output", "os.path.exists"}},
           {"explain.txt", {cuda, stat}, {"subprocess.check_output", "os.path.exists"}},
           {"gemm_fullgraph.txt", {gemm}, {"pathlib.Path.exists"}},
           {"gemm_graph_breaks.txt", {gemm}, {"pathlib.Path.exists"}},
       }) {
    INFO(c.log);
    auto r = env.explain({"--json", "explain", log_path(c.log)});
    INFO(r.err);
    CHECK(r.status == 3);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["breaks"].size() == c.breaks.size());
    for (size_t b = 0; b < c.breaks.size(); ++b) {
      CHECK(library_frames(j, b) == c.breaks[b]);
      CHECK(j["breaks"][b]["through"] == c.through[b]);
      CHECK(j["breaks"][b]["stale"] == false);
      CHECK(j["breaks"][b]["in_library"] == true);
    }
  }

  // The fixes as data: a hint's body where one fits, else disable on the function the user calls.
  auto r = env.explain({"--json", "explain", log_path("graph_breaks.txt")});
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["fixes"].size() == 2);
  CHECK(j["fixes"][0]["action"] == "replace-body");
  CHECK(j["fixes"][0]["function"] == "get_cuda_version");
  CHECK(j["fixes"][0]["code"] == "return Version(torch.version.cuda)\n");
  CHECK(j["fixes"][0]["hint"] == "cuda-version-from-torch");
  CHECK(j["fixes"][1]["action"] == "add-decorator");
  CHECK(j["fixes"][1]["module"] == "fakeinfer.fp4_quantization");
  CHECK(j["fixes"][1]["function"] == "fp4_quantize");
  CHECK(j["breaks"][0]["fix"] == 0);
  CHECK(j["breaks"][1]["fix"] == 1);
  CHECK(j["breaks"][0]["repeats"] == 2);
  CHECK(j["breaks"][1]["rule"] == "os-path-exists");
  auto& walk = j["breaks"][1]["walks"][0];
  CHECK(walk["from"] == "fakeinfer.fp4_quantization:fp4_quantize");
  REQUIRE(walk["chains"].size() == 3);
  CHECK(walk["chains"][0]["state"] == "this break");
  CHECK(walk["unresolved"].size() == 2);  // input.to, (input * 2).to: a tensor's methods, unknown here

  // The gemm break goes through a dict of builders and a property; the walk after the
  // fix finds the JIT build lock the same path would meet next.
  auto g = env.explain({"explain", log_path("gemm_fullgraph.txt")});
  CHECK(g.out.find("      filelock.FileLock (filelock, error): not traced: inside fakeinfer.gemm:fp4_gemm, which the "
                   "fix disables\n"
                   "        fakeinfer.gemm:fp4_gemm -> fakeinfer.gemm:get_gemm_module -> "
                   "fakeinfer.jit.core:JitSpec.build_and_load (fakeinfer/jit/core.py:27)\n") != std::string::npos);
  CHECK(g.out.find("fakeinfer.jit.core:JitSpec.aot_path (fakeinfer/jit/core.py:22)") != std::string::npos);
}

TEST_CASE("explain --recipe writes a recipe that plan and apply take, and the fix runs", "[e2e][explain]") {
  ExplainEnv env;
  std::string recipe = env.tmp.path + "/fix.yaml";
  std::string log = log_path("graph_breaks.txt");
  auto r = env.explain({"explain", log, "--recipe", recipe});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(r.out.substr(r.out.rfind("\nwrote")) ==
        "\nwrote " + recipe + " (2 edits); next: sitepatch --venv " + env.venv.root + " plan " + recipe + "\n");
  CHECK(testsupport::slurp(recipe) == with_log(kRecipe, log));

  auto plan = env.sp({"plan", recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);
  CHECK(plan.out.find("-    # Try to query nvcc for CUDA version; if nvcc is unavailable, fall back to torch.version.cuda\n") !=
        std::string::npos);
  CHECK(plan.out.find("+    return Version(torch.version.cuda)\n") != std::string::npos);
  CHECK(plan.out.find("+@torch.compiler.disable\n def fp4_quantize(") != std::string::npos);
  CHECK(plan.err == "will apply  fakeinfer-dynamo-get-cuda-version-fp4-quantize  fakeinfer.jit.cpp_ext:get_cuda_version  "
                    "replace-body  (fakeinfer/jit/cpp_ext.py:15)\n"
                    "will apply  fakeinfer-dynamo-get-cuda-version-fp4-quantize  fakeinfer.fp4_quantization:fp4_quantize  "
                    "add-decorator  "
                    "(fakeinfer/fp4_quantization.py:14)\n");

  auto apply = env.sp({"apply", recipe});
  INFO(apply.err);
  REQUIRE(apply.status == 0);
  // The replaced body returns torch's CUDA version without a process; the entry is disabled.
  auto run = env.venv.run_python(
      "from fakeinfer.jit.cpp_ext import get_cuda_version\n"
      "import fakeinfer\n"
      "print(get_cuda_version(), fakeinfer.fp4_quantize._torchdynamo_disable)\n");
  INFO(run.err);
  CHECK(run.out == "12.8 True\n");
  CHECK(env.sp({"verify"}).status == 0);

  // The log now describes code that is no longer there: explain says so rather than map it.
  auto after = env.explain({"--json", "explain", log});
  auto j = nlohmann::json::parse(after.out);
  CHECK(j["breaks"][0]["stale"] == true);
  CHECK(j["breaks"][0]["fix"].is_null());
}

TEST_CASE("explain reports frames stale when the package changed since the log", "[e2e][explain]") {
  ExplainEnv env(false);
  // fakeinfer 0.1.1: four lines added above get_cuda_version move every line below them.
  auto files = e2e::read_tree(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/fakeinfer-0.1.0");
  std::string& cpp = files["fakeinfer/jit/cpp_ext.py"];
  cpp.insert(cpp.find("def get_cuda_path"), "# The CUDA toolkit's root:\n# CUDA_HOME, else the default\n# install\n# folder.\n");
  env.venv.install({testsupport::build_wheel({"fakeinfer", "0.1.1", files}, env.tmp.path), torch_wheel(env.tmp.path)});
  auto r = env.explain({"explain", log_path("fullgraph.txt")});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find(
            "    your code at model.py:8 (forward) calls into fakeinfer 0.1.1:\n"
            "      fakeinfer.jit.cpp_ext:is_cuda_version_at_least  STALE             fakeinfer 0.1.1  fakeinfer/jit/cpp_ext.py:31\n"
            "      fakeinfer.jit.cpp_ext:get_cuda_version          STALE             fakeinfer 0.1.1  fakeinfer/jit/cpp_ext.py:19\n") !=
        std::string::npos);
  CHECK(r.out.find("    stale: fakeinfer/jit/cpp_ext.py:31 is in `get_cuda_version` now, not in `is_cuda_version_at_least` "
                   "(the package changed since the log)\n"
                   "    stale: fakeinfer/jit/cpp_ext.py:19 reads `def get_cuda_version() -> Version:` now, not "
                   "`txt = subprocess.check_output([nvcc, \"--version\"], text=True)` (the package changed since the log)\n"
                   "    no fix proposed: the package changed since the log (the stale frames above); run the model again "
                   "for a current log\n") != std::string::npos);
  CHECK(r.out.find("no fix to propose (see each break)\n") != std::string::npos);
  auto recipe = env.explain({"explain", log_path("fullgraph.txt"), "--recipe", env.tmp.path + "/r.yaml"});
  CHECK_FALSE(std::filesystem::exists(env.tmp.path + "/r.yaml"));
}

TEST_CASE("explain --hints adds a user's replacement", "[e2e][explain]") {
  ExplainEnv env;
  std::string hints = env.tmp.path + "/hints.yaml";
  testsupport::spit(hints,
                    "hints:\n"
                    "  - id: no-aot-module\n"
                    "    calls: os.path.exists\n"
                    "    holds: [fakeinfer, .so]\n"
                    "    replace-body: return None\n"
                    "    why: the AOT modules are never shipped on this server\n");
  auto r = env.explain({"--json", "explain", log_path("explain.txt"), "--hints", hints});
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["fixes"].size() == 2);
  CHECK(j["fixes"][1]["function"] == "load_module");
  CHECK(j["fixes"][1]["action"] == "replace-body");
  CHECK(j["fixes"][1]["hint"] == "no-aot-module");

  // --list-hints: the shipped ones, then the file's.
  auto list = testsupport::run_sitepatch({"explain", "--list-hints", "--hints", hints});
  CHECK(list.status == 0);
  CHECK(list.out.find("ID                       KIND   MATCH    ") == 0);
  CHECK(list.out.find("\nthread-allocate-lock     means  _thread.allocate_lock            builtin:dynamo.yaml:18\n") !=
        std::string::npos);
  CHECK(list.out.find("\nno-aot-module            fix    os.path.exists [fakeinfer, .so]  " + hints + ":2\n") !=
        std::string::npos);
  auto nolog = testsupport::run_sitepatch({"explain"});
  CHECK(nolog.status == 2);
  CHECK(nolog.err == "sitepatch: error: explain needs a LOG (a file, or - for stdin), or --list-hints\n");

  testsupport::spit(hints, "hints:\n  - id: x\n    calls: os.path.exists\n    holdz: [a]\n");
  auto bad = env.explain({"explain", log_path("explain.txt"), "--hints", hints});
  CHECK(bad.status == 2);
  CHECK(bad.err == "sitepatch: error: invalid hints file\n" + hints +
                       ":2:5: hint 1: a fix needs both `calls` and `replace-body`\n" + hints +
                       ":4:5: hint 1: unknown key `holdz`; did you mean `holds`?\n");
}

TEST_CASE("explain: a cut or damaged log is refused with what is missing, never read as clean", "[e2e][explain][cli]") {
  testsupport::TempDir tmp;
  std::map<std::string, std::string> noenv = {{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", ""}};
  std::string whole = testsupport::slurp(log_path("fullgraph.txt"));
  std::string cut = tmp.path + "/cut.txt";
  testsupport::spit(cut, whole.substr(0, whole.find("from user code:")));
  auto r = testsupport::run_sitepatch({"explain", cut}, noenv);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "sitepatch: error: the log " + cut +
                     " is incomplete or damaged, so its breaks cannot be read whole:\n"
                     "  line 20, the break \"Attempted to call function marked as skipped\": its user stack (\"from "
                     "user code:\") is missing: the log ends first\n"
                     "capture the whole output again (for example TORCH_LOGS=graph_breaks python model.py 2> log.txt) "
                     "and explain that\n");
  // Flipped bytes: before, "[1] : its stack ...", exit 0.
  std::string flipped = whole;
  for (size_t k = 0; k < flipped.size(); k += 17) flipped[k] = char(0xff);
  std::string bad = tmp.path + "/flipped.txt";
  testsupport::spit(bad, flipped);
  auto f = testsupport::run_sitepatch({"--json", "explain", bad}, noenv);
  CHECK(f.status == 2);
  auto j = nlohmann::json::parse(f.out);
  CHECK(j["ok"] == false);
  CHECK(j["error"]["message"].get<std::string>().find("is incomplete or damaged") != std::string::npos);
}

TEST_CASE("explain: dynamo's own hints and the operation of print, Logger methods, Tensor.item and .tolist",
          "[e2e][explain][cli]") {
  std::map<std::string, std::string> noenv = {{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", ""}};
  std::string log = log_path("builtins_graph_breaks.txt");
  auto r = testsupport::run_sitepatch({"explain", log}, noenv);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("[1] print: your code at builtins.py:4 (f); " + log + ":1\n"
                   "    dynamo's hint: Avoid calling builtin `print`") != std::string::npos);
  CHECK(r.out.find("[3] torch.Tensor.item: your code at builtins.py:10 (h); " + log + ":51\n"
                   "    dynamo's hint: Set `torch._dynamo.config.capture_scalar_outputs = True` or `export "
                   "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured graph.\n") !=
        std::string::npos);
  CHECK(r.out.find("Please report an issue") == std::string::npos);
  auto j = nlohmann::json::parse(testsupport::run_sitepatch({"--json", "explain", log}, noenv).out);
  CHECK(j["breaks"][1]["operation"] == "logging.Logger.warning");
  CHECK(j["breaks"][1]["dynamo_hints"] ==
        nlohmann::json::array({"Add the logging method to `torch._dynamo.config.ignore_logging_functions`."}));
  CHECK(j["breaks"][3]["operation"] == "torch.Tensor.tolist");
}

TEST_CASE("explain: a log with no break inside a library says so, exit 0, no environment needed", "[e2e][explain][cli]") {
  testsupport::TempDir tmp;
  std::string log = tmp.path + "/probe.txt";
  testsupport::spit(log, e2e::kUserCodeBreakLog);
  // No --venv, no $VIRTUAL_ENV: the answer comes from the log alone.
  std::map<std::string, std::string> noenv = {{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", ""}};
  auto r = testsupport::run_sitepatch({"explain", log}, noenv);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "no break in " + log + " is inside a library: 1 break in your own code or the standard library, "
                 "which no recipe patches\n"
                 "[1] _thread.allocate_lock: your code at probe.py:7 (forward), then the standard library at "
                 "subprocess.py:828 (__init__); " + log + ":1\n");
  auto j = nlohmann::json::parse(testsupport::run_sitepatch({"--json", "explain", log}, noenv).out);
  CHECK(j["breaks"][0]["in_library"] == false);
  CHECK(j["fixes"].empty());

  // No break at all, an unreadable log, stdin.
  std::string empty = tmp.path + "/clean.txt";
  testsupport::spit(empty, "loss 0.25\n");
  auto none = testsupport::run_sitepatch({"explain", empty}, noenv);
  CHECK(none.status == 0);
  CHECK(none.out == "no dynamo break in " + empty +
                        ": no torch._dynamo.exc.Unsupported error, no TORCH_LOGS=graph_breaks record, no "
                        "torch._dynamo.explain break reason\n");
  auto missing = testsupport::run_sitepatch({"explain", tmp.path + "/nope.txt"}, noenv);
  CHECK(missing.status == 2);
  CHECK(missing.err.rfind("sitepatch: error: cannot read log " + tmp.path + "/nope.txt", 0) == 0);
  auto in = sitepatch::util::run({SITEPATCH_BIN, "explain", "-"}, testsupport::slurp(log));
  CHECK(in.status == 0);
  CHECK(in.out.find("no break in - is inside a library") == 0);

  // A break inside a library needs the environment to place it.
  auto lib = testsupport::run_sitepatch({"explain", log_path("fullgraph.txt")}, {{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", ""}});
  CHECK(lib.status == 2);
}

TEST_CASE("explain maps frames in nested functions, methods and properties, from any prefix", "[e2e][explain]") {
  ExplainEnv env;
  env.venv.install(e2e::data_wheel("demo-jit", "1.0", env.tmp.path + "/wheels"));
  // Two runs' errors in one log, from a machine whose environment is elsewhere.
  std::string log = env.tmp.path + "/two.txt";
  testsupport::spit(log,
                    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
                    "  Developer debug context: module: posix, qualname: stat, skip reason: <missing reason>\n"
                    "\n"
                    "from user code:\n"
                    "   File \"/home/u/run.py\", line 3, in forward\n"
                    "    spec = read_spec(p)\n"
                    "  File \"/opt/py/lib/python3.12/site-packages/demo/jit/spec.py\", line 42, in read_spec\n"
                    "    return cached() or Path(path).read_text()\n"
                    "  File \"/opt/py/lib/python3.12/site-packages/demo/jit/spec.py\", line 40, in cached\n"
                    "    return os.path.exists(path + \".cache\")\n"
                    "  File \"<frozen genericpath>\", line 19, in exists\n"
                    "\n"
                    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
                    "  Developer debug context: module: posix, qualname: stat, skip reason: <missing reason>\n"
                    "\n"
                    "from user code:\n"
                    "   File \"/home/u/run.py\", line 9, in forward\n"
                    "    m = spec.build_and_load()\n"
                    "  File \"/opt/py/lib/python3.12/site-packages/fakeinfer/jit/core.py\", line 25, in build_and_load\n"
                    "    if self.aot_path.exists():\n"
                    "  File \"/opt/py/lib/python3.12/site-packages/fakeinfer/jit/core.py\", line 22, in aot_path\n"
                    "    return Path.home() / \".cache\" / \"fakeinfer\" / \"aot\" / f\"{self.name}.so\"\n"
                    "  File \"/usr/lib/python3.12/pathlib.py\", line 1370, in home\n"
                    "    return cls(\"~\").expanduser()\n");
  auto r = env.explain({"--json", "explain", log});
  INFO(r.err);
  CHECK(r.status == 3);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["breaks"].size() == 2);
  CHECK(library_frames(j, 0) == std::vector<std::string>{"demo.jit.spec:read_spec (function) demo-jit 1.0",
                                                         "demo.jit.spec:read_spec.cached (nested function) demo-jit 1.0"});
  CHECK(library_frames(j, 1) ==
        std::vector<std::string>{"fakeinfer.jit.core:JitSpec.build_and_load (method) fakeinfer 0.1.0",
                                 "fakeinfer.jit.core:JitSpec.aot_path (property) fakeinfer 0.1.0"});
  CHECK(j["breaks"][0]["frames"][1]["site_dir"] == env.venv.site_packages);
  CHECK(j["breaks"][0]["through"] == "os.path.exists");
  CHECK(j["breaks"][1]["through"] == "pathlib.Path.home");
  // The fixes: disable on what the user's code called, one per break.
  CHECK(j["fixes"][0]["function"] == "read_spec");
  CHECK(j["fixes"][1]["function"] == "JitSpec.build_and_load");
}

TEST_CASE("explain reads dynamo's resume functions as the function they resume, not as a changed package",
          "[e2e][explain]") {
  ExplainEnv env;
  env.venv.install(e2e::data_wheel("demo-jit", "1.0", env.tmp.path + "/wheels"));
  // Without fullgraph, the rest of a function after a break runs as dynamo's
  // `torch_dynamo_resume_in_<function>_at_<line>`: a second break there names that.
  std::string log = env.tmp.path + "/resumed.txt";
  testsupport::spit(log,
                    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
                    "  Developer debug context: module: posix, qualname: stat, skip reason: <missing reason>\n"
                    "\n"
                    "from user code:\n"
                    "   File \"/home/u/run.py\", line 3, in torch_dynamo_resume_in_forward_at_2\n"
                    "    spec = read_spec(p)\n"
                    "  File \"/opt/py/lib/python3.12/site-packages/demo/jit/spec.py\", line 42, in "
                    "torch_dynamo_resume_in_read_spec_at_41\n"
                    "    return cached() or Path(path).read_text()\n"
                    "  File \"/opt/py/lib/python3.12/site-packages/demo/jit/spec.py\", line 40, in cached\n"
                    "    return os.path.exists(path + \".cache\")\n"
                    "  File \"<frozen genericpath>\", line 19, in exists\n");
  auto r = env.explain({"--json", "explain", log});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["breaks"].size() == 1);
  CHECK(library_frames(j, 0) == std::vector<std::string>{"demo.jit.spec:read_spec (function) demo-jit 1.0",
                                                         "demo.jit.spec:read_spec.cached (nested function) demo-jit 1.0"});
  CHECK(r.out.find("changed since the log") == std::string::npos);
}

TEST_CASE("explain --recipe - prints the recipe alone on stdout", "[e2e][explain]") {
  ExplainEnv env;
  std::string log = log_path("fullgraph.txt");
  auto r = env.explain({"explain", log, "--recipe", "-"});
  CHECK(r.status == 3);
  CHECK(r.err == "sitepatch: 1 break inside a library; 1 edit proposed, each commented with its cost\n");
  CHECK(r.out.rfind("# Proposed by `sitepatch explain " + log + "`: review before applying.\n", 0) == 0);
  CHECK(r.out.find("    replace-body: |\n      return Version(torch.version.cuda)\n") != std::string::npos);
  // The founding story's first error alone: the replaced body, no decorator.
  CHECK(r.out.find("add-decorator") == std::string::npos);

  auto both = env.explain({"--json", "explain", log, "--recipe", "-"});
  CHECK(both.status == 2);
  CHECK(both.err == "sitepatch: error: --json and --recipe -: both print on stdout; give --recipe a file\n");
  auto nowhere = env.explain({"explain", log, "--recipe", env.tmp.path + "/no/such/fix.yaml"});
  CHECK(nowhere.status == 1);
  CHECK(nowhere.err.rfind("sitepatch: error: cannot write the recipe to " + env.tmp.path + "/no/such/fix.yaml: ", 0) == 0);
}

TEST_CASE("explain walks the user's code when its file is there: the founding story's next break, answered at once",
          "[e2e][explain]") {
  ExplainEnv env;
  // The log as the server wrote it, its working folder where this test keeps model.py.
  std::string serve = env.tmp.path + "/serve";
  testsupport::spit(serve + "/model.py", testsupport::slurp(log_path("model.py")));
  std::string text = testsupport::slurp(log_path("fullgraph.txt"));
  for (size_t at = text.find("/home/ml/serve"); at != std::string::npos; at = text.find("/home/ml/serve", at + serve.size()))
    text.replace(at, 14, serve);
  std::string log = serve + "/fullgraph.txt";
  testsupport::spit(log, text);

  // fullgraph=True stopped at the first break; the walk from Model.forward finds the
  // second (os.stat under the JIT loader) before the restart would.
  std::string recipe = env.tmp.path + "/fix.yaml";
  auto r = env.explain({"explain", log, "--recipe", recipe});
  INFO(r.err);
  INFO(r.out);
  CHECK(r.status == 3);
  CHECK(r.out.find(
            "from your code, model:Model.forward (model.py, breaks [1]): 3 chains reach flagged operations, 1 in the "
            "log, 2 it does not show yet (what the restart would meet next), each answered by the fixes; 4 calls could "
            "not be followed (-v lists them), so there may be more:\n"
            "      subprocess.check_output (subprocess, error): break [1] of the log\n"
            "        model:Model.forward -> fakeinfer.jit.cpp_ext:is_cuda_version_at_least -> "
            "fakeinfer.jit.cpp_ext:get_cuda_version (fakeinfer/jit/cpp_ext.py:19)\n"
            "      os.path.exists (os-path-exists, info): not traced: inside fakeinfer.fp4_quantization:fp4_quantize, "
            "which the fix disables\n"
            "        model:Model.forward -> fakeinfer.fp4_quantization:fp4_quantize -> "
            "fakeinfer.fp4_quantization:get_fp4_quantization_module -> fakeinfer.jit.cpp_ext:load_module "
            "(fakeinfer/jit/cpp_ext.py:36)\n") != std::string::npos);
  CHECK(r.out.find("    fix ahead of the log: add-decorator torch.compiler.disable on "
                   "fakeinfer.fp4_quantization:fp4_quantize\n") != std::string::npos);
  // The recipe is the founding one: the body of get_cuda_version, disable on fp4_quantize.
  std::string written = testsupport::slurp(recipe);
  CHECK(written.find("  - module: fakeinfer.jit.cpp_ext\n"
                     "    function: get_cuda_version\n"
                     "    replace-body: |\n"
                     "      return Version(torch.version.cuda)\n"
                     "    ensure-import: import torch\n"
                     "  # ahead of the log (the walk from your code finds it next): os.path.exists at "
                     "fakeinfer/jit/cpp_ext.py:36, open at fakeinfer/jit/cpp_ext.py:37\n") != std::string::npos);
  CHECK(written.find("  - module: fakeinfer.fp4_quantization\n"
                     "    function: fp4_quantize\n"
                     "    add-decorator: torch.compiler.disable\n"
                     "    ensure-import: import torch\n") != std::string::npos);
  auto plan = env.sp({"plan", recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);

  auto j = nlohmann::json::parse(env.explain({"--json", "explain", log}).out);
  REQUIRE(j["user_walks"].size() == 1);
  CHECK(j["user_walks"][0]["walk"]["from"] == "model:Model.forward");
  CHECK(j["user_walks"][0]["walk"]["chains"][0]["break"] == 0);
  CHECK(j["fixes"][1]["breaks"].empty());
  CHECK(j["fixes"][1]["ahead"] == nlohmann::json::parse(
                                      R"(["os.path.exists at fakeinfer/jit/cpp_ext.py:36", "open at fakeinfer/jit/cpp_ext.py:37"])"));
}

TEST_CASE("explain: where audit's walk loses the log's path, the note says where and the walk goes on", "[e2e][explain]") {
  ExplainEnv env;
  env.venv.install(e2e::data_wheel("demo-jit", "1.0", env.tmp.path + "/wheels"));
  std::string log = env.tmp.path + "/dyn.txt";
  // Loader.load calls getattr(self, "module")(), read as self.module(): an attribute
  // holding a module, which no static analysis follows; the log shows where it went.
  testsupport::spit(log,
                    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
                    "  Developer debug context: module: io, qualname: open, skip reason: <missing reason>\n"
                    "\n"
                    "from user code:\n"
                    "   File \"/home/u/run.py\", line 3, in forward\n"
                    "    loader.load()\n"
                    "  File \"/v/lib/python3.12/site-packages/demo/jit/loader.py\", line 22, in load\n"
                    "    return getattr(self, \"module\")()\n"
                    "  File \"/v/lib/python3.12/site-packages/demo/jit/spec.py\", line 16, in prepare\n"
                    "    open(\"/dev/null\").close()\n");
  auto r = env.explain({"explain", log});
  INFO(r.err);
  INFO(r.out);
  CHECK(r.status == 3);
  CHECK(r.out.find("[1] io.open: opens a file (open, pathlib.Path.open, read_text)\n"
                   "    reached through open (audit rule open, warning)\n") != std::string::npos);
  CHECK(r.out.find("    note: audit's walk did not follow the call at demo/jit/loader.py:22 (`getattr(self, \"module\")`: "
                   "attribute `module`: nothing this analysis follows assigns it); the log shows it reaches "
                   "demo.jit.spec:prepare, walked from there too\n") != std::string::npos);
  CHECK(r.out.find("    fix: add-decorator torch.compiler.disable on demo.jit.loader:Loader.load\n") != std::string::npos);
  CHECK(r.out.find("    after the fix, from demo.jit.spec:prepare: ") != std::string::npos);
}

TEST_CASE("explain proposes no fix, and no `import torch`, where the environment cannot import torch",
          "[e2e][explain]") {
  ExplainEnv env(false);
  env.venv.install({e2e::data_wheel("fakeinfer", "0.1.0", env.tmp.path + "/wheels")});
  std::string recipe = env.tmp.path + "/fix.yaml";
  auto r = env.explain({"explain", log_path("graph_breaks.txt"), "--recipe", recipe});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  std::string why = "no fix proposed: torch is not importable in " + env.venv.root +
                    ", and every fix needs it (`import torch` would break the patched module's import there); "
                    "explain against the environment the model runs in";
  CHECK(r.out.find("    " + why + "\n") != std::string::npos);
  CHECK(r.out.find("no fix to propose (see each break)") != std::string::npos);
  CHECK(r.out.find("fix ahead of the log") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(recipe));
  auto j = nlohmann::json::parse(env.explain({"--json", "explain", log_path("graph_breaks.txt")}).out);
  CHECK(j["fixes"].empty());
  CHECK(j["recipe"].is_null());
  CHECK(j["breaks"][0]["no_fix"] == why);
}

TEST_CASE("a frame in a source its compiled twin shadows is said to be compiled, and no fix goes there",
          "[e2e][explain]") {
  ExplainEnv env;
  // fakeinfer/jit/cpp_ext.py's twin, built with the C compiler: what import loads here.
  auto ask = [&](const std::string& code) {
    auto r = env.venv.run_python(code);
    REQUIRE(r.status == 0);
    return sitepatch::util::trim(r.out);
  };
  std::string suffix = ask("import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])");
  std::string include = ask("import sysconfig; print(sysconfig.get_paths()['include'])");
  testsupport::spit(env.tmp.path + "/cpp_ext.c",
                    "#include <Python.h>\nstatic struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"cpp_ext\", NULL, -1, "
                    "NULL};\nPyMODINIT_FUNC PyInit_cpp_ext(void) { return PyModule_Create(&def); }\n");
  std::string twin = env.venv.site_packages + "/fakeinfer/jit/cpp_ext" + suffix;
  auto cc = sitepatch::util::run({"cc", "-shared", "-fPIC", "-I" + include, env.tmp.path + "/cpp_ext.c", "-o", twin});
  INFO(cc.err);
  REQUIRE(cc.status == 0);
  auto r = env.explain({"explain", log_path("graph_breaks.txt")});
  INFO(r.out << r.err);
  CHECK(r.out.find("fakeinfer.jit.cpp_ext:is_cuda_version_at_least  compiled") != std::string::npos);
  CHECK(r.out.find("no fix proposed: fakeinfer/jit/cpp_ext.py is compiled here: Python imports its twin " + twin +
                   " instead, so no edit of the source runs (the log may come from another environment); fix its "
                   "caller") != std::string::npos);
  CHECK(r.out.find("replace-body of fakeinfer.jit.cpp_ext:get_cuda_version") == std::string::npos);
  auto j = env.explain({"--json", "explain", log_path("graph_breaks.txt")});
  CHECK(j.out.find("\"compiled\": \"" + twin + "\"") != std::string::npos);
}

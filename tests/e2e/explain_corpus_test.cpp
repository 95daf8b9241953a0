// Issue 37: explain --run on a corpus of shapes no other test knows, each run for real
// under dynamo (torch 2.13, CPU, fullgraph=True): the search must prove the narrow fix
// (never disable where something narrower works) within --max-runs 12, and the recipe
// it writes must compile when applied.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "corpus_env.hpp"

namespace {

namespace fs = std::filesystem;
using corpus::CorpusEnv;
using corpus::kCorpus;
using corpus::Shape;
using corpus::shape;

std::vector<std::string> kept(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (auto& k : j["kept"]) out.push_back(k["describe"].get<std::string>());
  return out;
}

// What must be the same warm and cold: every run's what, verdict and counts.
nlohmann::json search_of(const nlohmann::json& j) {
  nlohmann::json out = {{"kept", j["kept"]}, {"stop", j["stop"]}, {"runs", nlohmann::json::array()}};
  for (auto& r : j["runs"]) {
    auto& c = r["counts"];
    out["runs"].push_back({{"what", r["what"]}, {"kept", r["kept"]}, {"verdict", r["verdict"]},
                           {"breaks", r["breaks"]}, {"status", c["status"]}, {"graphs", c["graphs"]},
                           {"graph_breaks", c["graph_breaks"]}, {"compiled", c["compiled"]}});
  }
  return out;
}

enum class Cold { no, too };

// With Cold::too (issue 51 item 9), the same search with --cold, each run its own Python,
// must make the same runs and verdicts as the warm one, one run at a time in both.
void prove(const Shape& s, Cold cold = Cold::no) {
  CorpusEnv env(s);
  auto before = e2e::tree_state(env.venv.root);
  std::string recipe = env.tmp.path + "/proven.yaml";
  std::vector<std::string> args = {"--json", "explain", "--run", "python repro.py", "--recipe", recipe, "--max-runs", "12"};
  if (cold == Cold::too) args.insert(args.end(), {"--jobs", "1"});
  auto r = env.sp(args);
  INFO(r.out + r.err);
  REQUIRE(r.status == (s.fixes.empty() ? 3 : 0));
  auto j = nlohmann::json::parse(r.out);
  if (cold == Cold::too) {
    CHECK(j["runs"].size() >= 2);
    for (auto& run : j["runs"]) CHECK(run["start"] == "warm");
    args[5] = env.tmp.path + "/cold.yaml";
    args.push_back("--cold");
    auto c = env.sp(args);
    INFO(c.err);
    REQUIRE(c.status == r.status);
    auto cj = nlohmann::json::parse(c.out);
    CHECK(search_of(cj) == search_of(j));
    for (auto& run : cj["runs"]) CHECK(run["start"] == "cold: --cold");
    if (!s.fixes.empty()) CHECK(testsupport::slurp(args[5]) == testsupport::slurp(recipe));
  }
  if (s.fixes.empty()) {
    // No fix: said, with why for each frame, and nothing written.
    CHECK(j["kept"].empty());
    CHECK(j["stop"] == "no candidate left that helps");
    CHECK(j["recipe"].is_null());
    CHECK(!j["runs"][0]["frames"].empty());
    for (auto& f : j["runs"][0]["frames"]) {
      CHECK(f["assume_constant"] == false);
      CHECK(f["custom_op"] == false);
      CHECK(!f["why"].get<std::string>().empty());
      CHECK(!f["custom_op_why"].get<std::string>().empty());
    }
    CHECK(e2e::tree_state(env.venv.root) == before);
    return;
  }
  CHECK(kept(j) == std::vector<std::string>(s.fixes.begin(), s.fixes.end()));
  size_t rejected = 0, minimizing = 0;
  for (auto& run : j["runs"]) {
    bool check = run["minimizing"].get<bool>();
    minimizing += check;
    rejected += !check && !run["tried"].is_null() && !run["kept"].get<bool>();
  }
  // One run as it is, one per break got past, one per candidate rejected, one per kept
  // fix but the last to show it is needed: no more.
  CHECK(j["runs"].size() == s.fixes.size() + rejected + 1 + minimizing);
  CHECK(minimizing == (s.fixes.empty() ? 0 : s.fixes.size() - 1));
  CHECK(j["dropped"].empty());
  // The last kept run compiled and computed what the unpatched program computes.
  const nlohmann::json* last = nullptr;
  for (auto& run : j["runs"])
    if (run["kept"].get<bool>()) last = &run;
  REQUIRE(last);
  CHECK((*last)["counts"]["compiled"] == true);
  CHECK((*last)["counts"]["checked"]["mismatch"].is_null());
  CHECK((*last)["counts"]["checked"]["calls"] >= 1);
  CHECK((*last)["counts"]["checked"]["vs_record"] >= 1);
  CHECK(e2e::tree_state(env.venv.root) == before);
  // The proof holds outside the search: the recipe applied for real, the repro compiles.
  // One shape per kind of recipe the search writes (a decorator on the caller, two
  // fixes, a custom op) is enough: the search's last run already ran the same bytes
  // under try's overlay, and each such run costs a torch start (issue 52: test time).
  if (!s.outside) return;
  auto applied = env.sp({"apply", recipe});
  INFO(applied.err);
  REQUIRE(applied.status == 0);
  auto plain = sitepatch::util::run({"sh", "-c", "cd \"$0\" && exec \"$1\" repro.py", env.app, env.venv.python});
  INFO(plain.err);
  CHECK(plain.status == 0);
}

const std::vector<std::string> kShapes = {
    "smiprobe",   "nvccversion",  "ldcache",      "scalefile",      "cfgcache",  "envread",  "dynimport",
    "ctypesload", "handleobj",    "timing",       "logwarn",        "jitloader", "methodonly",
    // issue 51: from real libraries' patterns, each with its own model script
    "devsetting", "singletonprobe", "packquant", "opseam", "skippedtorch", "logsetup", "catchwarn", "moeconfig"};

}  // namespace

TEST_CASE("explain --run corpus: every shape in tests/data/dynamo-corpus has a test here", "[e2e][explain][corpus]") {
  std::vector<std::string> found;
  for (auto& e : fs::directory_iterator(kCorpus)) found.push_back(e.path().filename());
  std::sort(found.begin(), found.end());
  std::vector<std::string> tested = kShapes;
  std::sort(tested.begin(), tested.end());
  CHECK(found == tested);
  for (auto& name : kShapes) CHECK(fs::exists(kCorpus + "/" + name + "/site-packages/" + name + "/__init__.py"));
}

TEST_CASE("explain --run corpus: an nvidia-smi probe under lru_cache", "[e2e][explain][torch][corpus]") {
  prove(shape("smiprobe"));
}
TEST_CASE("explain --run corpus: an nvcc probe returning a Version object: its caller is the place, warm or cold",
          "[e2e][explain][torch][corpus][warm]") {
  prove(shape("nvccversion"), Cold::too);
}
TEST_CASE("explain --run corpus: an ldconfig probe", "[e2e][explain][torch][corpus]") { prove(shape("ldcache")); }
TEST_CASE("explain --run corpus: a scale file read through its default argument, after a cached probe",
          "[e2e][explain][torch][corpus]") {
  prove(shape("scalefile"));
}
TEST_CASE("explain --run corpus: a functools.cache getter that stats folders", "[e2e][explain][torch][corpus]") {
  prove(shape("cfgcache"));
}
TEST_CASE("explain --run corpus: an os.environ read with os.cpu_count, warm or cold",
          "[e2e][explain][torch][corpus][warm]") {
  prove(shape("envread"), Cold::too);
}
TEST_CASE("explain --run corpus: importlib.import_module by a computed name", "[e2e][explain][torch][corpus]") {
  prove(shape("dynimport"));
}
TEST_CASE("explain --run corpus: a ctypes load", "[e2e][explain][torch][corpus]") { prove(shape("ctypesload")); }
TEST_CASE("explain --run corpus: a getter of an object whose attribute the caller reads",
          "[e2e][explain][torch][corpus]") {
  prove(shape("handleobj"));
}
TEST_CASE("explain --run corpus: time.perf_counter around a kernel: only the custom-op route",
          "[e2e][explain][torch][corpus]") {
  prove(shape("timing"));
}
TEST_CASE("explain --run corpus: logging and warnings in a function of tensors", "[e2e][explain][torch][corpus]") {
  prove(shape("logwarn"));
}
TEST_CASE("explain --run corpus: a locked loader returning a kernel object, wrapped by a function of two tensors",
          "[e2e][explain][torch][corpus]") {
  prove(shape("jitloader"));
}
TEST_CASE("explain --run corpus: a method probe under fullgraph=True has no fix, and the tool says why",
          "[e2e][explain][torch][corpus]") {
  prove(shape("methodonly"));
}

// Issue 51: shapes written from real libraries' patterns, each with a model script that
// runs the compiled function first, then eager, and exits 1 when they differ.
TEST_CASE("explain --run corpus: a per-device setting keyed by the tensor's device type, where a custom op would lie",
          "[e2e][explain][torch][corpus]") {
  prove(shape("devsetting"));
}
TEST_CASE("explain --run corpus: a method of a module-level singleton that probes the host and caches on self",
          "[e2e][explain][torch][corpus]") {
  prove(shape("singletonprobe"));
}
TEST_CASE("explain --run corpus: a kernel wrapper returning a tuple of tensors of other dtypes and shapes",
          "[e2e][explain][torch][corpus]") {
  prove(shape("packquant"));
}
TEST_CASE("explain --run corpus: a library's stubbed custom-op seam", "[e2e][explain][torch][corpus]") {
  prove(shape("opseam"));
}
TEST_CASE("explain --run corpus: a path chosen by a torch helper dynamo skips", "[e2e][explain][torch][corpus]") {
  prove(shape("skippedtorch"));
}
TEST_CASE("explain --run corpus: a logging setup returning None before a second break",
          "[e2e][explain][torch][corpus]") {
  prove(shape("logsetup"));
}
TEST_CASE("explain --run corpus: a layer under a decorator that catches warnings", "[e2e][explain][torch][corpus]") {
  prove(shape("catchwarn"));
}
TEST_CASE("explain --run corpus: tuned settings keyed by the tensors' shapes", "[e2e][explain][torch][corpus]") {
  prove(shape("moeconfig"));
}

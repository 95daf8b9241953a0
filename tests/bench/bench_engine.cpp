// Benchmark: plan, apply, verify and rollback of one recipe with 200 edits over 50
// modules in a real venv, through the real binary. Prints medians, the floor every
// command pays (starting the environment's Python once), and how many times each
// command parsed Python sources. Not a test: it asserts nothing, it measures.
//
// usage: sitepatch_bench [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "sitepatch/engine/engine.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "bench_support.hpp"
#include "support/fixture.hpp"

namespace {

using benchsupport::median;

constexpr int kModules = 50;
constexpr int kFunctionsPerModule = 40;

std::string module_source(int m) {
  std::string s = "\"\"\"Generated module " + std::to_string(m) + ".\"\"\"\nimport functools\nimport os\n\n";
  for (int f = 0; f < kFunctionsPerModule; ++f) {
    std::string n = std::to_string(f);
    if (f % 5 == 0) s += "@functools.cache\n";
    s += "def f" + n + "(x, y=" + n + "):\n    \"\"\"Function " + n + ".\"\"\"\n";
    s += "    total = x + y\n    for i in range(" + n + "):\n        total += i * os.getpid() % 7\n";
    s += "    return total\n\n\n";
  }
  s += "class Worker:\n    timeout = 30\n\n";
  for (int f = 0; f < 10; ++f)
    s += "    def method" + std::to_string(f) + "(self, a):\n        return a + " + std::to_string(f) + "\n\n";
  return s;
}

std::string recipe_text() {
  std::string r = "id: bench-200\ndescription: 200 edits over 50 modules\nedits:\n";
  for (int m = 0; m < kModules; ++m) {
    std::string mod = "benchpkg.mod" + std::to_string(m);
    r += "  - module: " + mod + "\n    function: f1\n    replace-body: |\n      return x * y\n";
    r += "  - module: " + mod + "\n    function: f2\n    add-decorator: torch_free.disable\n"
         "    ensure-import: import torch_free\n";
    r += "  - module: " + mod + "\n    function: f3\n    replace: {old: 'total = x + y', new: 'total = x - y'}\n";
    r += "  - module: " + mod + "\n    function: Worker.method3\n    prepend-body: |\n      a = int(a)\n";
  }
  return r;
}

double seconds_of(const std::vector<std::string>& args) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = testsupport::run_sitepatch(args);
  auto t1 = std::chrono::steady_clock::now();
  if (r.status != 0) {
    std::fprintf(stderr, "sitepatch %s failed (%d): %s\n", args[2].c_str(), r.status, r.err.c_str());
    std::exit(1);
  }
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  spdlog::set_level(spdlog::level::warn);
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  testsupport::WheelSpec spec{"benchpkg", "1.0", {{"benchpkg/__init__.py", ""},
                                                   {"torch_free.py", "def disable(f):\n    return f\n"}}};
  for (int m = 0; m < kModules; ++m)
    spec.files["benchpkg/mod" + std::to_string(m) + ".py"] = module_source(m);
  venv.install(testsupport::build_wheel(spec, tmp.path));
  std::string recipe = tmp.path + "/bench.yaml";
  testsupport::spit(recipe, recipe_text());

  std::map<std::string, std::vector<double>> t;
  for (int i = 0; i < rounds; ++i) {
    t["plan"].push_back(seconds_of({"--venv", venv.root, "plan", "-q", recipe}));
    t["apply"].push_back(seconds_of({"--venv", venv.root, "apply", "-q", recipe}));
    t["verify"].push_back(seconds_of({"--venv", venv.root, "verify", "-q"}));
    t["rollback"].push_back(seconds_of({"--venv", venv.root, "rollback", "-q", "--all"}));
    auto t0 = std::chrono::steady_clock::now();
    sitepatch::util::run({venv.python, "-c", "pass"});
    t["python -c pass"].push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  // Parses per command, counted in-process through the engine.
  auto host = sitepatch::host::make_local_host();
  auto session = sitepatch::engine::Session::open(*host, venv.root, "");
  auto r = sitepatch::recipe::parse(testsupport::slurp(recipe), recipe);
  size_t before = sitepatch::python::parse_count();
  auto plan = sitepatch::engine::plan(session, {r});
  size_t plan_parses = sitepatch::python::parse_count() - before;
  before = sitepatch::python::parse_count();
  auto applied = sitepatch::engine::apply(session, {r}, false);
  size_t apply_parses = sitepatch::python::parse_count() - before;
  before = sitepatch::python::parse_count();
  sitepatch::engine::verify(session, {});
  sitepatch::engine::rollback(session, {}, true, false);
  size_t other_parses = sitepatch::python::parse_count() - before;

  std::printf("sitepatch benchmark: 1 recipe, %zu edits over %d modules (%d functions each), %d rounds\n",
              r.edits.size(), kModules, kFunctionsPerModule, rounds);
  std::printf("%-16s %10s %10s %10s\n", "command", "median s", "min s", "max s");
  for (const char* k : {"plan", "apply", "verify", "rollback", "python -c pass"}) {
    auto& v = t[k];
    std::printf("%-16s %10.3f %10.3f %10.3f\n", k, median(v), *std::min_element(v.begin(), v.end()),
                *std::max_element(v.begin(), v.end()));
  }
  std::printf("files changed: %zu; parses: plan %zu, apply %zu (each original once, each result "
              "once more, incrementally, for the syntax check), verify+rollback %zu\n",
              plan.files.size(), plan_parses, apply_parses, other_parses);
  return applied.written ? 0 : 1;
}

// Benchmark: how `plan` grows with the size of the recipe (issue 10, #16). Recipes of
// 2k, 10k and 40k edits (or the sizes given) in two shapes: "wide", 100 edits per
// module over more and more modules, and "deep", every edit in one module of as many
// functions (Python's own compile of such a module is then a good part of the time).
// Prints wall time and peak memory of `sitepatch plan -q` for each, and the
// time per 1k edits, which stays flat when plan is linear. Not a test: it measures.
//
// usage: [SITEPATCH_BENCH_BIN=other/sitepatch] sitepatch_bench_plan_scale [EDITS...]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/fixture.hpp"

namespace {

constexpr int kPerModule = 100;

std::string function_source(int f) {
  std::string n = std::to_string(f);
  return "def f" + n + "(x, y=" + n + "):\n    \"\"\"Function " + n + ".\"\"\"\n    total = x + y\n" +
         "    return total\n\n\n";
}

std::string module_source(int functions) {
  std::string s = "\"\"\"Generated.\"\"\"\nimport os\n\n\n";
  for (int f = 0; f < functions; ++f) s += function_source(f);
  return s;
}

// Edit `f` of `module`: the four common actions in turn.
std::string edit(const std::string& module, int f) {
  std::string head = "  - module: " + module + "\n    function: f" + std::to_string(f) + "\n";
  switch (f % 4) {
    case 0: return head + "    replace-body: return x * y\n";
    case 1: return head + "    add-decorator: scalepkg.noop\n";
    case 2: return head + "    replace: {old: 'total = x + y', new: 'total = x - y'}\n";
    default: return head + "    prepend-body: x = int(x)\n";
  }
}

struct Measure {
  double seconds;
  long peak_kb;
  int status;
};

// Runs the binary in a child of its own, so its peak memory is its own.
Measure run_plan(const std::string& venv, const std::string& recipe) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    // SITEPATCH_BENCH_BIN measures another build (main's, for a before/after).
    const char* bin = std::getenv("SITEPATCH_BENCH_BIN") ? std::getenv("SITEPATCH_BENCH_BIN") : SITEPATCH_BIN;
    execl(bin, bin, "--venv", venv.c_str(), "plan", "-q", recipe.c_str(), nullptr);
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {s, ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {2000, 10000, 40000};
  int largest = 0;
  for (int n : sizes) largest = std::max(largest, n);

  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  testsupport::WheelSpec spec{"scalepkg", "1.0", {{"scalepkg/__init__.py", "def noop(f):\n    return f\n"}}};
  int modules = (largest + kPerModule - 1) / kPerModule;
  for (int m = 0; m < modules; ++m) spec.files["scalepkg/m" + std::to_string(m) + ".py"] = module_source(kPerModule);
  for (int n : sizes) spec.files["scalepkg/deep" + std::to_string(n) + ".py"] = module_source(n);
  venv.install(testsupport::build_wheel(spec, tmp.path));

  std::printf("sitepatch plan -q, by recipe size (wall s, peak MB, s per 1k edits)\n");
  std::printf("%-6s %8s %10s %9s %9s %12s\n", "shape", "edits", "recipe KB", "wall s", "peak MB", "s/1k edits");
  for (const char* shape : {"wide", "deep"}) {
    for (int n : sizes) {
      std::string text = "id: scale\nedits:\n";
      bool wide = std::string(shape) == "wide";
      for (int i = 0; i < n; ++i)
        text += wide ? edit("scalepkg.m" + std::to_string(i / kPerModule), i % kPerModule) : edit("scalepkg.deep" + std::to_string(n), i);
      std::string recipe = tmp.path + "/" + shape + std::to_string(n) + ".yaml";
      testsupport::spit(recipe, text);
      Measure m = run_plan(venv.root, recipe);
      if (m.status != 0) std::fprintf(stderr, "plan of %s exited %d\n", recipe.c_str(), m.status);
      std::printf("%-6s %8d %10zu %9.2f %9.0f %12.3f\n", shape, n, text.size() / 1024, m.seconds,
                  m.peak_kb / 1024.0, m.seconds / (n / 1000.0));
      std::fflush(stdout);
    }
  }
  return 0;
}

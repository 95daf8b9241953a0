// Benchmark: a recipe of hundreds of files (issue 49, #9). A synthetic package of FILES
// modules of about 50 KB each (classes, methods, docstrings, comprehensions: what a
// library such as transformers holds), one edit per module (replace-body and
// prepend-body in turn). Times `plan`, then rounds of `apply`, `list`, `status`,
// `verify` and `rollback` of the real binary, beside `python -c pass` in the same venv:
// medians of wall and CPU seconds (the command and the Python it starts) and the
// largest peak RSS of a round. With SITEPATCH_BENCH_OLD=other/sitepatch, that build
// runs each command right after this one's, on the same venv. Asserts nothing.
//
// usage: [SITEPATCH_BENCH_OLD=old/sitepatch] sitepatch_bench_recipe_scale [FILES [ROUNDS]]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "support/fixture.hpp"

namespace {

constexpr size_t kModuleBytes = 50 * 1000;

std::string function_source(int m, int f) {
  std::string n = std::to_string(f), k = std::to_string(m * 1000 + f);
  return "def f" + n + "(x, y=" + k + ", *args, scale=1.0, **kwargs):\n"
         "    \"\"\"Function " + n + " of the module.\n\n"
         "    Args:\n        x: the value.\n        y: the offset (default " + k + ").\n    \"\"\"\n"
         "    # combine the inputs\n"
         "    items = [v * scale for v in args if v is not None]\n"
         "    table = {str(i): v for i, v in enumerate(items)}\n"
         "    if kwargs.get(\"verbose\"):\n"
         "        logger.info(\"f" + n + ": %s items\", len(items))\n"
         "    total = x + y + sum(items)\n"
         "    for key, value in sorted(table.items()):\n"
         "        total += len(key) * value\n"
         "    return total\n\n\n";
}

std::string class_source(int m, int c) {
  std::string n = std::to_string(c);
  std::string s = "class Model" + n + "(Base):\n"
                  "    \"\"\"A model of module " + std::to_string(m) + ".\"\"\"\n\n"
                  "    config_class = dict\n\n"
                  "    def __init__(self, config, hidden=" + n + "):\n"
                  "        super().__init__()\n"
                  "        self.config = config\n"
                  "        self.hidden = hidden\n"
                  "        self.layers = [Layer(i) for i in range(hidden)]\n\n";
  for (int i = 0; i < 4; ++i)
    s += "    def forward" + std::to_string(i) + "(self, inputs, mask=None):\n"
         "        out = inputs\n"
         "        for layer in self.layers:\n"
         "            out = layer(out) if mask is None else layer(out) * mask\n"
         "        return out\n\n";
  return s + "\n";
}

std::string module_source(int m) {
  std::string s = "\"\"\"Generated module " + std::to_string(m) + ".\"\"\"\n"
                  "import logging\nimport math\nimport os\n\n"
                  "logger = logging.getLogger(__name__)\n\n\n"
                  "class Base:\n    pass\n\n\n"
                  "class Layer:\n    def __init__(self, i):\n        self.i = i\n\n"
                  "    def __call__(self, x):\n        return x + self.i\n\n\n";
  for (int f = 0; s.size() < kModuleBytes; ++f) s += f % 5 == 4 ? class_source(m, f) : function_source(m, f);
  return s;
}

std::string recipe_text(int files) {
  std::string text = "id: scale\ndescription: one edit in each of " + std::to_string(files) + " modules\nedits:\n";
  for (int m = 0; m < files; ++m) {
    text += "  - module: scalepkg.m" + std::to_string(m) + "\n    function: f" + std::to_string(m % 4) + "\n";
    text += m % 2 ? "    prepend-body: x = int(x)\n" : "    replace-body: return x * y\n";
  }
  return text;
}

struct Measure {
  double wall, cpu;
  long peak_kb;
  int status;
};

// Runs `argv` in a child of its own, so its peak memory and CPU (with the Python it
// starts and waits for) are its own.
Measure run(const std::vector<std::string>& argv) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return {wall, cpu, ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

struct Row {
  std::vector<double> wall, cpu;
  long peak_kb = 0;
  void add(const Measure& m) {
    wall.push_back(m.wall);
    cpu.push_back(m.cpu);
    peak_kb = std::max(peak_kb, m.peak_kb);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int files = argc > 1 ? std::atoi(argv[1]) : 300;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<std::pair<std::string, std::string>> builds = {{"new", SITEPATCH_BIN}};
  if (const char* old = std::getenv("SITEPATCH_BENCH_OLD")) builds.push_back({"old", old});

  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  testsupport::WheelSpec spec{"scalepkg", "1.0", {{"scalepkg/__init__.py", ""}}};
  size_t bytes = 0;
  for (int m = 0; m < files; ++m) {
    auto& text = spec.files["scalepkg/m" + std::to_string(m) + ".py"] = module_source(m);
    bytes += text.size();
  }
  venv.install(testsupport::build_wheel(spec, tmp.path));
  std::string recipe = tmp.path + "/scale.yaml";
  testsupport::spit(recipe, recipe_text(files));
  std::printf("%d modules, %.1f MB, one edit each; %d rounds\n", files, bytes / 1e6, rounds);
  if (rounds == 0) {
    // The venv and recipe alone, kept for a profiler: sitepatch_bench_recipe_scale 300 0 DIR
    std::string keep = argc > 3 ? argv[3] : tmp.path + ".kept";
    std::filesystem::rename(tmp.path, keep);
    std::filesystem::create_directories(tmp.path);  // TempDir removes what it made
    std::printf("kept the venv and recipe in %s\n", keep.c_str());
    return 0;
  }

  // Each round: python -c pass, plan, then apply, list, status, verify, rollback, each
  // build in turn (the venv is back to pip's files after every rollback).
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"plan", {"plan", "-q", recipe}}, {"apply", {"apply", "-q", recipe}}, {"list", {"list"}},
      {"status", {"status"}},           {"verify", {"verify"}},             {"rollback", {"rollback", "scale"}}};
  std::map<std::string, Row> rows;
  for (int r = 0; r < rounds; ++r) {
    rows["python -c pass"].add(run({venv.python, "-c", "pass"}));
    for (auto& [name, bin] : builds)
      for (auto& [command, args] : commands) {
        std::vector<std::string> argv = {bin, "--venv", venv.root};
        argv.insert(argv.end(), args.begin(), args.end());
        Measure m = run(argv);
        if (m.status != 0) std::fprintf(stderr, "%s %s exited %d\n", name.c_str(), command.c_str(), m.status);
        rows[name + " " + command].add(m);
      }
  }
  double python = benchsupport::median(rows["python -c pass"].wall);
  std::printf("%-16s %9s %9s %9s %10s\n", "command", "wall s", "cpu s", "peak MB", "x python");
  auto print = [&](const std::string& key) {
    auto& row = rows[key];
    double wall = benchsupport::median(row.wall);
    std::printf("%-16s %9.3f %9.3f %9.1f %10.1f\n", key.c_str(), wall, benchsupport::median(row.cpu),
                row.peak_kb / 1024.0, wall / python);
  };
  print("python -c pass");
  for (auto& [name, bin] : builds)
    for (auto& [command, args] : commands) print(name + " " + command);
  return 0;
}

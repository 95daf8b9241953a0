// Parse time of one module holding a run of N comment lines inside a block (issue 41,
// finding 4): the grammar's scanner used to scan the rest of the run again from each of
// its lines, N^2. Times a bare tree-sitter parse (python::ts::Tree) of each shape at
// 1k, 4k, 16k and 100k lines (or the counts given), the parse bound lifted so that a
// quadratic build runs to the end: `sitepatch_bench_comment_runs [N...]`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "python/tree.hpp"

namespace {

std::string run(const std::string& indent, int n, bool dedented) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (dedented && i % 2 ? std::string() : indent) + "# comment line " + std::to_string(i) + "\n";
  return out;
}

struct Shape {
  const char* name;
  std::string (*make)(int);
};

const Shape kShapes[] = {
    {"function body, comments at its indentation",
     [](int n) { return "def f(x):\n    y = x\n" + run("    ", n, false) + "    return y\n"; }},
    {"function body, every other comment at column 0",
     [](int n) { return "def f(x):\n    y = x\n" + run("    ", n, true) + "    return y\n"; }},
    {"class body between two methods",
     [](int n) { return "class A:\n    def m(self):\n        pass\n" + run("    ", n, true) + "    def n(self):\n        pass\n"; }},
    {"module level (linear before too)", [](int n) { return "x = 1\n" + run("", n, false) + "y = 2\n"; }},
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts;
  for (int i = 1; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {1'000, 4'000, 16'000, 100'000};
  sitepatch::python::ts::bounds() = {std::size_t(1) << 30, uint64_t(3600) * 1'000'000, 0};
  std::printf("| shape | lines | MB | parse s (median of 3) |\n| --- | ---: | ---: | ---: |\n");
  for (const Shape& shape : kShapes) {
    for (int n : counts) {
      std::string text = shape.make(n);
      std::vector<double> times;
      for (int round = 0; round < 3; ++round) {
        auto start = std::chrono::steady_clock::now();
        sitepatch::python::ts::Tree tree(text);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (times.back() > 20) break;  // a quadratic build: one round says enough
      }
      std::printf("| %s | %d | %.2f | %.4f |\n", shape.name, n, double(text.size()) / 1e6,
                  benchsupport::median(times));
      std::fflush(stdout);
    }
  }
  return 0;
}

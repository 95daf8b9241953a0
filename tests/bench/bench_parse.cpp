// The floor for audit --path: every .py file under a folder parsed by tree-sitter-python
// on all cores, nothing extracted. tests/bench/bench_audit.sh times it beside
// sitepatch and ast-grep.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "python/tree.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/parallel.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(argv[1], fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    std::string name = it->path().filename().string();
    if (it->is_directory() && (name == "__pycache__" || name[0] == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path().string());
  }
  std::atomic<size_t> bytes{0}, errors{0};
  sitepatch::util::parallel_for(files.size(), [&](size_t i) {
    auto text = sitepatch::util::read_file(files[i]);
    if (!text) return;
    bytes += text->size();
    sitepatch::python::ts::Tree tree(*text);
    if (ts_node_has_error(tree.root())) ++errors;
  });
  std::printf("files %zu bytes %zu with_syntax_errors %zu\n", files.size(), bytes.load(), errors.load());
  return 0;
}

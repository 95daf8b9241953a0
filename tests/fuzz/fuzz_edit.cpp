// Fuzz target: a module source and a recipe, separated by the first "\n---\n" line (the
// layout of tests/golden/actions.txt) -> every edit of the recipe applied to the module.
// Findings: a crash or hang; an exception other than sitepatch::Error; a result whose
// incremental re-parse disagrees with a fresh parse; and a result that does not parse
// although the module (with every definition starting its line, and compiled by
// Python) and every piece of new code parse on their own.
#include <cctype>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sitepatch/python/module.hpp"
#include "sitepatch/recipe/recipe.hpp"

namespace {

using sitepatch::recipe::Action;

bool parses(const std::string& code) { return sitepatch::python::Module(code).syntax_problems().empty(); }

// Whether the edit's own new code parses as a module (a `replace` may legitimately
// break the syntax around it, so it never counts as clean).
bool clean_code(const sitepatch::recipe::Edit& e) {
  if (e.action == Action::replace) return false;
  // A decorator is an expression only where `@` allows it (`a=b` parses as a statement).
  std::string code = e.action == Action::add_decorator ? "@" + e.code + "\ndef _f():\n    pass\n" : e.code;
  if (!e.code.empty() && !parses(code)) return false;
  return e.ensure_import.empty() || parses(e.ensure_import);
}

// Whether every `def` and `class` starts its line, as Python requires. tree-sitter
// accepts `x*async def f():` without an error, and an edit placed at such a
// definition cannot give valid code; plan's compile by Python refuses those.
bool definitions_start_lines(const std::string& source) {
  size_t at = 0;
  while (at < source.size()) {
    size_t end = source.find_first_of("\r\n", at);
    if (end == std::string::npos) end = source.size();
    std::string line = source.substr(at, end - at);
    size_t first = line.find_first_not_of(" \t\f");
    if (first != std::string::npos) {
      line = line.substr(first);
      if (line.rfind("async ", 0) == 0) line = line.substr(6);
      for (const char* kw : {"def", "class"})
        for (size_t k = line.find(kw, 1); k != std::string::npos; k = line.find(kw, k + 1))
          if (!std::isalnum(static_cast<unsigned char>(line[k - 1])) && line[k - 1] != '_') return false;
    }
    at = end + 1;
  }
  return true;
}

// Whether Python compiles `source` (asked only when the oracle fails, so rarely):
// tree-sitter accepts some code Python does not (`"""doc"""name`), and an edit of a
// module Python rejects is no finding.
bool python_accepts(const std::string& source) {
  char path[] = "/tmp/sitepatch-fuzz-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return true;
  bool written = write(fd, source.data(), source.size()) == ssize_t(source.size());
  close(fd);
  std::string cmd = std::string("python3 -c \"import sys; compile(open(sys.argv[1], 'rb').read(), 'm', 'exec')\" ") +
                    path + " >/dev/null 2>&1";
  int status = written ? std::system(cmd.c_str()) : 0;
  unlink(path);
  return status == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  size_t cut = input.find("\n---\n");
  if (cut == std::string::npos) return 0;
  std::string source = input.substr(0, cut + 1);
  sitepatch::recipe::Recipe recipe;
  try {
    recipe = sitepatch::recipe::parse(input.substr(cut + 5), "fuzz.yaml");
  } catch (const sitepatch::recipe::RecipeError&) {
    return 0;
  }
  try {
    sitepatch::python::Module module(source);
    std::vector<const sitepatch::recipe::Edit*> edits;
    bool clean = module.syntax_problems().empty() && definitions_start_lines(source);
    for (const auto& e : recipe.edits) {
      edits.push_back(&e);
      clean = clean && clean_code(e);
    }
    std::vector<sitepatch::python::EditResult> results;
    std::vector<sitepatch::python::TextChange> changes;
    std::string next = module.apply(edits, results, &changes);
    if (results.size() != edits.size()) std::abort();
    if (next == source) return 0;
    bool incremental_ok = module.edited(next, changes).syntax_problems().empty();
    bool fresh_ok = parses(next);
    if (incremental_ok != fresh_ok) std::abort();
    if (clean && !fresh_ok && python_accepts(source)) std::abort();
  } catch (const sitepatch::Error&) {
  }
  return 0;
}

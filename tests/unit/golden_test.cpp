// Golden files for locate and edit (tests/golden/*.txt), in the manner of
// tree-sitter's corpus: a title between ==== lines, the input module, `---`, a
// recipe, `---`, and the expected output: one line per edit that does not apply,
// then the unified diff. SITEPATCH_UPDATE_GOLDEN=1 rewrites the expected outputs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sitepatch/python/module.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/store/history.hpp"
#include "support/fixture.hpp"

namespace fs = std::filesystem;
using namespace sitepatch;

namespace {

struct Case {
  std::string title, module, recipe, expected;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<Case> parse_cases(const std::string& text) {
  std::vector<Case> cases;
  auto lines = lines_of(text);
  auto is_bar = [](const std::string& l) { return l.size() >= 3 && l.find_first_not_of('=') == std::string::npos; };
  for (size_t i = 0; i < lines.size();) {
    if (!is_bar(lines[i])) {
      ++i;
      continue;
    }
    Case c;
    c.title = lines[i + 1];
    i += 3;
    int part = 0;
    for (; i < lines.size() && !is_bar(lines[i]); ++i) {
      if (lines[i] == "---" && part < 2) {
        ++part;
        continue;
      }
      std::string& dst = part == 0 ? c.module : part == 1 ? c.recipe : c.expected;
      dst += lines[i] + "\n";
    }
    // A blank line separates cases; it belongs to none of them.
    while (!c.expected.empty() && c.expected.size() >= 2 &&
           c.expected.compare(c.expected.size() - 2, 2, "\n\n") == 0)
      c.expected.pop_back();
    if (c.expected == "\n") c.expected.clear();
    cases.push_back(c);
  }
  return cases;
}

std::string run_case(const Case& c) {
  auto r = recipe::parse(c.recipe, "golden.yaml");
  std::vector<const recipe::Edit*> edits;
  for (auto& e : r.edits) edits.push_back(&e);
  python::Module m(c.module);
  std::vector<python::EditResult> results;
  std::string out = m.apply(edits, results);
  std::string report;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].outcome == python::Outcome::will_apply) continue;
    std::string label = r.edits[i].action == recipe::Action::replace ? "the module" : "ensure-import";
    report += (r.edits[i].target.empty() ? label : r.edits[i].target) + ": " +
              (results[i].outcome == python::Outcome::failed ? "fails: " : "") + results[i].message;
    if (!results[i].nearest.empty()) {
      report += " (nearest:";
      for (auto& n : results[i].nearest) report += " " + n;
      report += ")";
    }
    report += "\n";
  }
  return report + store::unified_diff(c.module, out, "pkg/mod.py");
}

std::string render(const std::vector<Case>& cases, const std::vector<std::string>& outputs) {
  std::string text;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i) text += "\n";
    text += "==================\n" + cases[i].title + "\n==================\n" + cases[i].module + "---\n" +
            cases[i].recipe + "---\n" + outputs[i];
  }
  return text;
}

}  // namespace

TEST_CASE("golden files: locate and edit", "[python][golden]") {
  std::string dir = std::string(SITEPATCH_SOURCE_DIR) + "/tests/golden";
  bool update = std::getenv("SITEPATCH_UPDATE_GOLDEN") != nullptr;
  size_t checked = 0;
  for (auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    auto cases = parse_cases(testsupport::slurp(entry.path().string()));
    std::vector<std::string> outputs;
    for (auto& c : cases) {
      outputs.push_back(run_case(c));
      if (!update) {
        INFO(entry.path().filename().string() + ": " + c.title);
        CHECK(outputs.back() == c.expected);
      }
      ++checked;
    }
    if (update) testsupport::spit(entry.path().string(), render(cases, outputs));
  }
  CHECK(checked >= 10);
}

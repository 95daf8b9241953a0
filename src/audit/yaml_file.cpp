#include "audit/yaml_file.hpp"

#include <algorithm>
#include <tuple>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::detail {

recipe::Mark mark_of(const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  if (m.is_null() || m.line < 0) return {1, 1};
  return {m.line + 1, m.column + 1};
}

std::vector<std::string> FileProblems::lines() const {
  auto sorted = list_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const recipe::Diagnostic& a, const recipe::Diagnostic& b) {
    return std::tie(a.mark.line, a.mark.column) < std::tie(b.mark.line, b.mark.column);
  });
  std::vector<std::string> out;
  for (auto& d : sorted) out.push_back(d.str());
  return out;
}

void FileProblems::raise_if_any() const {
  if (list_.empty()) return;
  throw Error("invalid " + kind_ + " file\n" + util::join(lines(), "\n"), Exit::usage);
}

YAML::Node load_list_file(std::string_view text, const std::string& key, const std::string& what,
                          FileProblems& problems) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    recipe::Mark m = e.mark.is_null() ? recipe::Mark{1, 1} : recipe::Mark{e.mark.line + 1, e.mark.column + 1};
    problems.add(m, "YAML syntax error: " + e.msg);
    problems.raise_if_any();
  }
  std::string article = std::string("aeiou").find(key[0]) == std::string::npos ? "a" : "an";
  if (!root.IsMap() || !root[key]) {
    problems.add(mark_of(root), what + " is a mapping with " + article + " `" + key + ":` list");
    problems.raise_if_any();
  }
  for (const auto& pair : root) {
    std::string k = pair.first.IsScalar() ? pair.first.Scalar() : "";
    if (k != key) problems.add(mark_of(pair.first), "unknown key `" + k + "`; " + what + " has only `" + key + ":`");
  }
  return root[key];
}

}  // namespace sitepatch::audit::detail

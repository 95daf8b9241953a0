#include "unbound.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

std::map<size_t, std::vector<python::FreeName>> free_names_by_edit(const python::Module& result, const std::string& rel,
                                                              const std::vector<EditSpan>& spans,
                                                              const std::vector<std::string>& builtins) {
  std::map<size_t, std::vector<python::FreeName>> out;
  std::vector<std::pair<size_t, size_t>> ranges;
  for (const auto& s : spans) ranges.emplace_back(s.begin, s.end);
  auto free = result.free_names(ranges, builtins);
  if (!free) {
    spdlog::info("plan: names new code uses cannot be checked in {}: a star import, globals() or exec", rel);
    return out;
  }
  for (const auto& f : *free)
    for (const auto& s : spans)
      if (s.begin <= f.offset && f.offset < s.end) {
        out[s.edit].push_back(f);  // free_names() reports each name once
        break;
      }
  return out;
}

namespace {

std::string quoted(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const auto& n : names) q.push_back("`" + n + "`");
  return util::join(q, ", ");
}

}  // namespace

void note_unbound(Plan& p, const std::string& rel, const std::map<size_t, std::vector<python::FreeName>>& names) {
  for (const auto& [i, list] : names) {
    EditStatus& st = p.edits[i];
    if (st.state != EditState::will_apply || list.empty()) continue;
    std::vector<std::string> plain, attributes;
    for (const auto& f : list) {
      st.unbound.push_back(f.name);
      (f.class_attribute ? attributes : plain).push_back(f.name);
    }
    std::string where = " to the edit at " + st.recipe_path + ":" + std::to_string(st.recipe_line);
    std::vector<std::string> parts;
    if (!plain.empty())
      parts.push_back("uses " + quoted(plain) + ", which " + rel +
                      " never binds (no import, definition or assignment) and " +
                      (plain.size() == 1 ? "is not a builtin" : "are not builtins") +
                      ": add `ensure-import: import " + plain.front() + "` (or the import that binds it)" + where);
    if (!attributes.empty())
      parts.push_back("uses " + quoted(attributes) + " bare, but " + (attributes.size() == 1 ? "it is" : "they are") +
                      " bound in a class body, which a method does not see: write `self." + attributes.front() +
                      "` (or the class's name and a dot) in the edit at " + st.recipe_path + ":" +
                      std::to_string(st.recipe_line));
    st.warning = util::join(parts, "; ");
  }
}

void refuse_unbound(Plan& p) {
  for (auto& st : p.edits)
    if (st.state == EditState::will_apply && !st.unbound.empty()) {
      st.state = EditState::failed;
      st.message = st.warning + "; or apply --force to write it anyway";
    }
}

}  // namespace sitepatch::engine::detail

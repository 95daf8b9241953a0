#include "unbound.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

std::map<size_t, std::vector<std::string>> free_names_by_edit(const python::Module& result, const std::string& rel,
                                                              const std::vector<EditSpan>& spans,
                                                              const std::vector<std::string>& builtins) {
  std::map<size_t, std::vector<std::string>> out;
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
        auto& names = out[s.edit];
        if (std::find(names.begin(), names.end(), f.name) == names.end()) names.push_back(f.name);
        break;
      }
  return out;
}

void note_unbound(Plan& p, const std::string& rel, const std::map<size_t, std::vector<std::string>>& names) {
  for (const auto& [i, list] : names) {
    EditStatus& st = p.edits[i];
    if (st.state != EditState::will_apply || list.empty()) continue;
    st.unbound = list;
    std::vector<std::string> quoted;
    for (const auto& n : list) quoted.push_back("`" + n + "`");
    st.warning = "uses " + util::join(quoted, ", ") + ", which " + rel +
                 " never binds (no import, definition or assignment) and " +
                 (list.size() == 1 ? "is not a builtin" : "are not builtins") + ": add `ensure-import: import " +
                 list.front() + "` (or the import that binds it) to the edit at " + st.recipe_path + ":" +
                 std::to_string(st.recipe_line);
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

#include "status_json.hpp"

namespace sitepatch::cli {

nlohmann::json status_json(const engine::PatchStatus& s) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : s.files)
    files.push_back({{"path", f.rel},
                     {"state", engine::state_name(f.state)},
                     {"message", or_null(f.message)},
                     {"upgrade", or_null(f.upgrade)},
                     {"uninstalled", f.uninstalled},
                     {"broken", or_null(f.broken)}});
  return {{"id", s.id},
          {"description", or_null(s.description)},
          {"distribution", or_null(s.dist)},
          {"distributions", s.dists},
          {"applied_at", s.applied_at},
          {"recipe", or_null(s.recipe_path)},
          {"state", engine::state_name(s.state)},
          {"history", s.history},
          {"shared_by", or_null(s.shared_by)},
          {"shipped", or_null(s.shipped)},
          {"unfinished", or_null(s.unfinished)},
          {"unfinished_message", or_null(s.unfinished_message)},
          {"files", files}};
}

Paint paint_for(engine::FileState s) {
  switch (s) {
    case engine::FileState::applied: return Paint::ok;
    case engine::FileState::modified: return Paint::warn;
    default: return Paint::bad;
  }
}

}  // namespace sitepatch::cli

#include "engine/records/file_state.hpp"

#include "sitepatch/python/units.hpp"

namespace sitepatch::engine::detail {

std::string Upgrade::replaced(const std::string& rel) const {
  return uninstalled ? from_to + "; " + rel + " left behind" : from_to + " replaced " + rel;
}

std::optional<Upgrade> upgrade_of(const store::FileRecord& f, const host::DistributionIndex& dists) {
  if (f.dist.empty()) return std::nullopt;
  const site::Distribution* now = dists.find(f.dist);
  if (!now) return Upgrade{f.dist + " " + f.version + " was uninstalled", true};
  if (now->version == f.version) return std::nullopt;
  return Upgrade{f.dist + " " + f.version + " -> " + now->version, false};
}

std::vector<std::string> upgrades_of(const store::PatchRecord& r, const host::DistributionIndex& dists) {
  std::vector<std::string> out;
  for (auto& f : r.files)
    if (auto up = upgrade_of(f, dists)) out.push_back(up->replaced(f.rel));
  return out;
}

store::MergeResult undo_edit(const std::string& after, const std::string& now, const std::string& before,
                             const std::string& rel) {
  auto m = store::merge3(after, now, before, rel);
  if (m.clean) return m;
  try {
    auto merged = store::merge_units(python::statement_units(after), python::statement_units(now),
                                     python::statement_units(before));
    if (merged) {
      std::string text;
      for (auto& u : *merged) text += u;
      return {true, text};
    }
  } catch (const Error&) {
    // A text too large to parse within its bound: the text merge's verdict stands.
  }
  return m;
}

FileStatus file_state(const store::FileRecord& f, bool exists, const std::string& content,
                      const std::optional<std::string>& left, const host::DistributionIndex& dists) {
  FileStatus fs;
  fs.rel = f.rel;
  fs.state = FileState::applied;
  auto upgrade = upgrade_of(f, dists);
  if (upgrade) {
    fs.upgrade = upgrade->from_to;
    fs.uninstalled = upgrade->uninstalled;
  }
  if (!exists) {
    fs.state = FileState::missing;
    if (!upgrade) fs.message = f.rel + " no longer exists";
    else if (upgrade->uninstalled) fs.message = upgrade->from_to + "; " + f.rel + " is gone";
    else fs.message = upgrade->from_to + " removed " + f.rel;
    return fs;
  }
  // As sitepatch last left it, or exactly as this patch left it: a later patch of the same
  // file is not in it (its rollback was cut short, say), but this one's edit is intact.
  if ((left && content == *left) || content == f.after) return fs;
  if (upgrade) {
    // pip rewrote the file: whatever it holds now is that version's, not ours to undo.
    fs.state = FileState::replaced;
    fs.message = upgrade->replaced(f.rel);
    return fs;
  }
  if (content == f.before) {
    fs.state = FileState::reverted;
    fs.message = f.rel + " is back to its original";
    return fs;
  }
  auto undo = undo_edit(f.after, content, f.before, f.rel);
  if (undo.clean && undo.content != content) {
    fs.state = FileState::modified;
    fs.message = f.rel + " was changed by someone else; the edit is still in it";
  } else {
    fs.state = FileState::replaced;
    fs.message = f.rel + " was rewritten since the apply; the edit is gone";
  }
  return fs;
}

}  // namespace sitepatch::engine::detail

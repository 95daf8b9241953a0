// Packing: the loose objects of the last commits go into one new pack file, so a
// history that must travel (to a remote machine) is a few files; once there are many
// packs, everything reachable from HEAD is packed again into one. Each commit thus
// packs only what it added, however long the history.
#include <filesystem>
#include <set>

#include "store/history_impl.hpp"

namespace fs = std::filesystem;

namespace sitepatch::store {
namespace {

constexpr int kMaxPacks = 16;

void refresh(git_repository* repo) {
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo) == 0) {
    git_odb_refresh(odb);
    git_odb_free(odb);
  }
}

}  // namespace

void History::pack() {
  git_repository* repo = impl_->repo.get();
  const std::string& where = impl_->path;
  if (!impl_->head_commit()) return;
  std::string objects = where + "/objects";
  std::error_code ec;
  std::vector<std::pair<fs::path, git_oid>> loose;
  std::set<std::string> packs;  // objects/pack/* files
  for (auto& dir : fs::directory_iterator(objects, ec)) {
    std::string name = dir.path().filename().string();
    if (name == "pack") {
      for (auto& f : fs::directory_iterator(dir.path(), ec)) packs.insert(f.path().string());
      continue;
    }
    if (!dir.is_directory() || name.size() != 2) continue;
    for (auto& f : fs::directory_iterator(dir.path(), ec)) {
      git_oid oid;
      if (git_oid_fromstr(&oid, (name + f.path().filename().string()).c_str()) == 0)
        loose.emplace_back(f.path(), oid);
    }
  }
  size_t pack_files = 0;
  for (auto& p : packs) pack_files += fs::path(p).extension() == ".pack";
  bool full = pack_files + 1 > kMaxPacks;
  if (loose.empty() && !full) return;

  git_packbuilder* pb = nullptr;
  detail::check(git_packbuilder_new(&pb, repo), "cannot start a pack", where);
  int rc = 0;
  git_revwalk* walk = nullptr;
  if (full) {
    rc = git_revwalk_new(&walk, repo);
    if (rc == 0) rc = git_revwalk_push_head(walk);
    if (rc == 0) rc = git_packbuilder_insert_walk(pb, walk);
  } else {
    for (auto& [path, oid] : loose)
      if (rc == 0) rc = git_packbuilder_insert(pb, &oid, nullptr);
  }
  if (rc == 0) rc = git_packbuilder_write(pb, nullptr, 0, nullptr, nullptr);
  git_revwalk_free(walk);
  git_packbuilder_free(pb);
  detail::check(rc, "cannot write a pack", where);

  // What the new pack holds goes from where it was (loose, or the older packs).
  for (auto& [path, oid] : loose) fs::remove(path, ec);
  if (full) {
    std::set<std::string> now;
    for (auto& f : fs::directory_iterator(objects + "/pack", ec)) now.insert(f.path().string());
    bool wrote_new = false;
    for (auto& p : now) wrote_new = wrote_new || !packs.count(p);
    if (wrote_new)
      for (auto& p : packs)
        if (fs::path(p).filename() != "packs") fs::remove(p, ec);
  }
  for (auto& e : fs::directory_iterator(objects, ec))
    if (e.is_directory() && e.path().filename().string().size() == 2 && fs::is_empty(e.path(), ec))
      fs::remove(e.path(), ec);
  refresh(repo);
}

}  // namespace sitepatch::store

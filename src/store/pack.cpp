// Packing: every object reachable from HEAD in one pack file, loose objects and older
// packs removed, so a history that must travel (to a remote machine) is a few files.
#include <filesystem>
#include <set>

#include "store/history_impl.hpp"

namespace fs = std::filesystem;

namespace sitepatch::store {

void History::pack() {
  git_repository* repo = impl_->repo.get();
  const std::string& where = impl_->path;
  if (!impl_->head_commit()) return;
  std::string objects = where + "/objects";
  std::set<std::string> before;
  std::error_code ec;
  for (auto& e : fs::recursive_directory_iterator(objects, ec))
    if (e.is_regular_file()) before.insert(e.path().string());

  git_packbuilder* pb = nullptr;
  detail::check(git_packbuilder_new(&pb, repo), "cannot start a pack", where);
  git_revwalk* walk = nullptr;
  int rc = git_revwalk_new(&walk, repo);
  if (rc == 0) rc = git_revwalk_push_head(walk);
  if (rc == 0) rc = git_packbuilder_insert_walk(pb, walk);
  if (rc == 0) rc = git_packbuilder_write(pb, nullptr, 0, nullptr, nullptr);
  git_revwalk_free(walk);
  git_packbuilder_free(pb);
  detail::check(rc, "cannot write a pack", where);

  // The new pack holds everything reachable; what was there before goes.
  std::set<std::string> after;
  for (auto& e : fs::recursive_directory_iterator(objects, ec))
    if (e.is_regular_file()) after.insert(e.path().string());
  bool wrote_new = false;
  for (auto& p : after) wrote_new = wrote_new || !before.count(p);
  if (!wrote_new) return;  // the same pack again: nothing to remove
  for (auto& p : before) {
    fs::path f(p);
    bool keep = f.parent_path().filename() == "info" || f.filename() == "packs";
    if (!keep) fs::remove(f, ec);
  }
  for (auto& e : fs::directory_iterator(objects, ec))
    if (e.is_directory() && e.path().filename().string().size() == 2) fs::remove(e.path(), ec);
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo) == 0) {
    git_odb_refresh(odb);
    git_odb_free(odb);
  }
}

}  // namespace sitepatch::store

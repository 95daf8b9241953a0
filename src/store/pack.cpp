// Packing: the objects of the last commits (kept in memory by a travelling history,
// else loose) go into one new pack file, so a history that must travel (to a remote
// machine) is a few files; once there are many packs, everything reachable from HEAD is
// packed again into one. Each commit thus packs only what it added, however long the
// history.
#include <filesystem>
#include <set>

#include <git2/sys/mempack.h>

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

/// The objects in the in-memory store, as one pack indexed into objects/pack; then the
/// store is emptied (its objects are read from the pack from now on).
void write_memory(git_repository* repo, const std::string& where, git_odb_backend* memory) {
  git_buf pack = GIT_BUF_INIT;
  detail::check(git_mempack_dump(&pack, repo, memory), "cannot pack the new objects", where);
  detail::Owned<git_buf, git_buf_dispose> owned_pack(&pack);
  git_odb* odb = nullptr;
  detail::check(git_repository_odb(&odb, repo), "cannot open the object store", where);
  detail::Owned<git_odb, git_odb_free> owned_odb(odb);
  git_indexer* raw = nullptr;
  git_indexer_options opts = GIT_INDEXER_OPTIONS_INIT;
  detail::check(git_indexer_new(&raw, (where + "/objects/pack").c_str(), 0, odb, &opts),
                "cannot write a pack", where);
  detail::Owned<git_indexer, git_indexer_free> indexer(raw);
  git_indexer_progress progress{};
  detail::check(git_indexer_append(raw, pack.ptr, pack.size, &progress), "cannot write a pack", where);
  detail::check(git_indexer_commit(raw, &progress), "cannot write a pack", where);
  detail::check(git_mempack_reset(memory), "cannot empty the in-memory object store", where);
}

}  // namespace

void History::pack() {
  git_repository* repo = impl_->repo.get();
  const std::string& where = impl_->path;
  if (!impl_->head_commit()) return;
  if (impl_->unpacked) {
    write_memory(repo, where, impl_->memory);
    impl_->unpacked = false;
    refresh(repo);
  }
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
  bool full = pack_files + (loose.empty() ? 0 : 1) > kMaxPacks;  // counting the pack about to be written
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

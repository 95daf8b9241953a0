// Packing: the objects of the last commits (kept in memory by a travelling history,
// else loose) go into one new pack file, so a history that must travel (to a remote
// machine) is a few files; once there are many packs, everything reachable from HEAD is
// packed again into one. Each commit thus packs only what it added, however long the
// history.
#include <filesystem>
#include <set>

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

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

/// `tree` and what it holds, where the in-memory store has them. A tree already on disk
/// holds nothing new: objects are written leaves first.
void insert_new(git_packbuilder* pb, git_repository* repo, git_odb_backend* memory, const git_oid& tree,
                const std::string& where) {
  if (!memory->exists(memory, &tree)) return;
  detail::check(git_packbuilder_insert(pb, &tree, nullptr), "cannot pack the new objects", where);
  git_tree* raw = nullptr;
  detail::check(git_tree_lookup(&raw, repo, &tree), "cannot read a new tree", where);
  detail::TreePtr owned(raw);
  for (size_t i = 0, n = git_tree_entrycount(raw); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(raw, i);
    const git_oid* id = git_tree_entry_id(e);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
      insert_new(pb, repo, memory, *id, where);
    else if (memory->exists(memory, id))
      detail::check(git_packbuilder_insert(pb, id, nullptr), "cannot pack the new objects", where);
  }
}

/// The objects the commits since `packed` (every commit when null) wrote, as one pack in
/// objects/pack; then the in-memory store is emptied (they are read from the pack from
/// now on). Only what is in memory goes in: not git_mempack_dump, which packs each
/// commit's whole tree, nor a walk, which packs again what an older commit had (a
/// rollback's originals).
void write_memory(git_repository* repo, const std::string& where, git_odb_backend* memory,
                  const git_oid* packed) {
  git_packbuilder* pb = nullptr;
  detail::check(git_packbuilder_new(&pb, repo), "cannot start a pack", where);
  detail::Owned<git_packbuilder, git_packbuilder_free> owned_pb(pb);
  git_revwalk* walk = nullptr;
  detail::check(git_revwalk_new(&walk, repo), "cannot walk the history", where);
  detail::Owned<git_revwalk, git_revwalk_free> owned_walk(walk);
  detail::check(git_revwalk_push_head(walk), "cannot walk the history", where);
  if (packed) detail::check(git_revwalk_hide(walk, packed), "cannot walk the history", where);
  git_oid oid;
  int rc;
  while ((rc = git_revwalk_next(&oid, walk)) == 0) {
    if (!memory->exists(memory, &oid)) continue;
    detail::check(git_packbuilder_insert(pb, &oid, nullptr), "cannot pack the new objects", where);
    detail::CommitPtr commit;
    git_commit* raw = nullptr;
    detail::check(git_commit_lookup(&raw, repo, &oid), "cannot read a new commit", where);
    commit.reset(raw);
    insert_new(pb, repo, memory, *git_commit_tree_id(raw), where);
  }
  if (rc != GIT_ITEROVER) detail::check(rc, "cannot walk the history", where);
  detail::check(git_packbuilder_write(pb, nullptr, 0, nullptr, nullptr), "cannot write a pack", where);
  detail::check(git_mempack_reset(memory), "cannot empty the in-memory object store", where);
}

}  // namespace

void History::pack() {
  git_repository* repo = impl_->repo.get();
  const std::string& where = impl_->path;
  if (!impl_->head_commit()) return;
  if (impl_->unpacked) {
    write_memory(repo, where, impl_->memory, impl_->packed ? &*impl_->packed : nullptr);
    impl_->unpacked = false;
    impl_->packed = *git_commit_id(impl_->head_commit().get());
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

// What one commit of the history did to the files it tracks, as a diff relative to
// the site folder (the paths `show` prints), for `log -p` and `show COMMIT`.
#include <algorithm>
#include <map>
#include <optional>

#include "store/history_impl.hpp"
#include "store/record.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::store {

using namespace detail;

namespace {

TreePtr tree_of(const Repo& r, const git_commit* c) {
  if (!c) return {};
  git_tree* raw = nullptr;
  check(git_commit_tree(&raw, c), "cannot read a commit's tree", r.path);
  return TreePtr(raw);
}

TreePtr subtree(const Repo& r, const git_tree* tree, const char* name) {
  if (!tree) return {};
  git_tree_entry* raw = nullptr;
  int rc = git_tree_entry_bypath(&raw, tree, name);
  if (rc == GIT_ENOTFOUND) return {};
  check(rc, std::string("cannot read ") + name + "/", r.path);
  TreeEntryPtr entry(raw);
  if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) return {};
  git_tree* sub = nullptr;
  check(git_tree_lookup(&sub, r.repo.get(), git_tree_entry_id(entry.get())), std::string("cannot read ") + name + "/",
        r.path);
  return TreePtr(sub);
}

// site/<rel> -> its blob, every file below site/.
std::map<std::string, git_oid> site_files(const Repo& r, const git_tree* tree) {
  std::map<std::string, git_oid> out;
  TreePtr site = subtree(r, tree, "site");
  if (!site) return out;
  auto visit = [](const char* root, const git_tree_entry* e, void* into) -> int {
    if (git_tree_entry_type(e) == GIT_OBJECT_BLOB)
      (*static_cast<std::map<std::string, git_oid>*>(into))[std::string(root) + git_tree_entry_name(e)] =
          *git_tree_entry_id(e);
    return 0;
  };
  check(git_tree_walk(site.get(), GIT_TREEWALK_PRE, visit, &out), "cannot read site/", r.path);
  return out;
}

std::vector<std::string> patch_ids(const Repo& r, const git_tree* tree) {
  std::vector<std::string> out;
  TreePtr patches = subtree(r, tree, "patches");
  if (!patches) return out;
  for (size_t i = 0, n = git_tree_entrycount(patches.get()); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(patches.get(), i);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) out.emplace_back(git_tree_entry_name(e));
  }
  return out;
}

// A file leaves site/ when the last patch on it is rolled back: it went back to the
// original of the first of those patches to have been applied.
std::optional<std::string> original_of(const Repo& r, const git_tree* parent, const std::vector<std::string>& dropped,
                                       const std::string& rel) {
  std::optional<std::string> out;
  int64_t first = 0;
  for (auto& id : dropped) {
    auto before = r.read_path(parent, "patches/" + id + "/before/" + rel);
    auto json = r.read_path(parent, "patches/" + id + "/patch.json");
    if (!before || !json) continue;
    std::vector<FileBlobs> blobs;
    int64_t at = record_from_json(*json, r.path + ":patches/" + id + "/patch.json", blobs).applied_at;
    if (!out || at < first) {
      out = std::move(before);
      first = at;
    }
  }
  return out;
}

}  // namespace

std::string History::diff_of(const std::string& oid) const {
  const Repo& r = *impl_;
  git_oid id;
  if (git_oid_fromstr(&id, oid.c_str()) < 0) fail("not a commit id: " + oid, r.path);
  git_commit* raw = nullptr;
  check(git_commit_lookup(&raw, r.repo.get(), &id), "cannot read commit " + oid, r.path);
  CommitPtr commit(raw);
  CommitPtr parent;
  if (git_commit_parentcount(commit.get()) > 0) {
    git_commit* p = nullptr;
    check(git_commit_parent(&p, commit.get(), 0), "cannot read the parent of " + oid, r.path);
    parent.reset(p);
  }
  TreePtr now_tree = tree_of(r, commit.get()), was_tree = tree_of(r, parent.get());
  auto now = site_files(r, now_tree.get()), was = site_files(r, was_tree.get());

  // Only a rollback writes the originals back; a file leaving site/ otherwise (an
  // aborted apply, a record an upgrade made redundant) was not written.
  std::vector<std::string> dropped;
  if (util::starts_with(git_commit_summary(commit.get()), "rollback ")) {
    auto kept = patch_ids(r, now_tree.get());
    for (auto& p : patch_ids(r, was_tree.get()))
      if (std::find(kept.begin(), kept.end(), p) == kept.end()) dropped.push_back(p);
  }
  std::string out;
  for (auto& [rel, blob] : was) {
    auto it = now.find(rel);
    if (it != now.end()) {
      if (!git_oid_equal(&blob, &it->second)) out += unified_diff(r.read_blob(blob), r.read_blob(it->second), rel);
    } else if (auto back = original_of(r, was_tree.get(), dropped, rel)) {
      out += unified_diff(r.read_blob(blob), *back, rel);
    }
  }
  // A file entering site/ is the file as sitepatch found it: tracked, not changed.
  return out;
}

}  // namespace sitepatch::store

// Opening the history repository, HEAD helpers, and the log.
#include <algorithm>

#include "store/history_impl.hpp"

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "sitepatch/util/error.hpp"

namespace sitepatch::store {

using namespace detail;

History::History(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
History::~History() = default;

std::unique_ptr<History> History::open(const std::string& dir, bool create, bool travels) {
  init_libgit2();
  git_repository* raw = nullptr;
  int rc = git_repository_open_bare(&raw, dir.c_str());
  if (rc == GIT_ENOTFOUND) {
    if (!create) return nullptr;
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH |
                 GIT_REPOSITORY_INIT_MKDIR;
    opts.initial_head = "main";
    opts.description = "sitepatch history: files sitepatch touched and every apply/rollback";
    rc = git_repository_init_ext(&raw, dir.c_str(), &opts);
    check(rc, "cannot create the history repository", dir);
  } else {
    check(rc, "cannot open the history repository", dir);
  }
  auto impl = std::make_unique<Impl>();
  impl->repo.reset(raw);
  impl->path = dir;
  if (travels) {
    // Above the folder's own backends (1 and 2), so every write lands here; reads fall
    // through to the packs.
    git_odb* odb = nullptr;
    check(git_repository_odb(&odb, raw), "cannot open the object store", dir);
    detail::Owned<git_odb, git_odb_free> owned(odb);
    check(git_mempack_new(&impl->memory), "cannot make an in-memory object store", dir);
    int rc = git_odb_add_backend(odb, impl->memory, 999);
    if (rc < 0) impl->memory->free(impl->memory);
    check(rc, "cannot make an in-memory object store", dir);
    if (auto head = impl->head_commit()) impl->packed = *git_commit_id(head.get());
  }
  return std::unique_ptr<History>(new History(std::move(impl)));
}

const std::string& History::path() const { return impl_->path; }

CommitPtr Repo::head_commit() const {
  git_reference* head = nullptr;
  int rc = git_repository_head(&head, repo.get());
  if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) return {};
  check(rc, "cannot resolve HEAD", path);
  Owned<git_reference, git_reference_free> owned(head);
  git_commit* commit = nullptr;
  check(git_commit_lookup(&commit, repo.get(), git_reference_target(head)),
        "cannot read HEAD's commit", path);
  return CommitPtr(commit);
}

TreePtr Repo::head_tree() const {
  CommitPtr commit = head_commit();
  if (!commit) return {};
  git_tree* tree = nullptr;
  check(git_commit_tree(&tree, commit.get()), "cannot read HEAD's tree", path);
  return TreePtr(tree);
}

std::optional<std::string> Repo::read_path(const git_tree* tree,
                                                    const std::string& p) const {
  git_tree_entry* raw = nullptr;
  int rc = git_tree_entry_bypath(&raw, tree, p.c_str());
  if (rc == GIT_ENOTFOUND) return std::nullopt;
  check(rc, "cannot look up " + p, path);
  TreeEntryPtr entry(raw);
  if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) return std::nullopt;
  return read_blob(*git_tree_entry_id(entry.get()));
}

std::string Repo::read_blob(const git_oid& oid) const {
  git_blob* raw = nullptr;
  check(git_blob_lookup(&raw, repo.get(), &oid), "cannot read blob " + oid_hex(oid), path);
  BlobPtr blob(raw);
  auto* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
  return std::string(data, static_cast<size_t>(git_blob_rawsize(blob.get())));
}

std::vector<LogEntry> History::log() const {
  std::vector<LogEntry> out;
  if (!impl_->head_commit()) return out;
  git_revwalk* raw = nullptr;
  check(git_revwalk_new(&raw, impl_->repo.get()), "cannot walk the history", impl_->path);
  RevwalkPtr walk(raw);
  check(git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME),
        "cannot walk the history", impl_->path);
  check(git_revwalk_push_head(walk.get()), "cannot walk the history", impl_->path);
  git_oid oid;
  int rc;
  while ((rc = git_revwalk_next(&oid, walk.get())) == 0) {
    git_commit* c = nullptr;
    check(git_commit_lookup(&c, impl_->repo.get(), &oid), "cannot read commit " + oid_hex(oid),
          impl_->path);
    CommitPtr commit(c);
    LogEntry e;
    e.oid = oid_hex(oid);
    e.time = static_cast<int64_t>(git_commit_time(commit.get()));
    const char* summary = git_commit_summary(commit.get());
    e.summary = summary ? summary : "";
    const char* message = git_commit_message(commit.get());
    e.message = message ? message : "";
    if (const git_signature* a = git_commit_author(commit.get()))
      e.author = std::string(a->name ? a->name : "") + " <" + (a->email ? a->email : "") + ">";
    out.push_back(std::move(e));
  }
  if (rc != GIT_ITEROVER) fail("cannot walk the history", impl_->path);
  return out;
}

std::vector<std::string> History::site_file_versions(const std::string& rel) const {
  std::vector<std::string> out;
  if (rel.empty() || rel.front() == '/' || !impl_->head_commit()) return out;
  git_revwalk* raw = nullptr;
  check(git_revwalk_new(&raw, impl_->repo.get()), "cannot walk the history", impl_->path);
  RevwalkPtr walk(raw);
  check(git_revwalk_push_head(walk.get()), "cannot walk the history", impl_->path);
  std::vector<git_oid> seen;
  git_oid oid;
  while (git_revwalk_next(&oid, walk.get()) == 0) {
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, impl_->repo.get(), &oid) != 0) continue;
    CommitPtr commit(c);
    git_tree* t = nullptr;
    if (git_commit_tree(&t, commit.get()) != 0) continue;
    TreePtr tree(t);
    git_tree_entry* e = nullptr;
    if (git_tree_entry_bypath(&e, tree.get(), ("site/" + rel).c_str()) != 0) continue;
    TreeEntryPtr entry(e);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) continue;
    const git_oid* id = git_tree_entry_id(entry.get());
    if (std::any_of(seen.begin(), seen.end(), [&](const git_oid& k) { return git_oid_equal(&k, id); })) continue;
    seen.push_back(*id);
    out.push_back(impl_->read_blob(*id));
  }
  return out;
}

}  // namespace sitepatch::store

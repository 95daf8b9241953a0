// Building one commit: HEAD's tree read into an in-memory index, the transaction
// applied to it, written as a tree, committed on main.
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <set>

#include "sitepatch/util/error.hpp"
#include "store/history_impl.hpp"
#include "store/record.hpp"

namespace sitepatch::store {

using namespace detail;

namespace {

// A relative path made of plain components: no leading '/', no "", ".", "..".
void check_rel(const std::string& rel, const std::string& what) {
  bool ok = !rel.empty() && rel.front() != '/' && rel.back() != '/';
  for (size_t start = 0; ok && start <= rel.size();) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    std::string part = rel.substr(start, end - start);
    ok = !part.empty() && part != "." && part != "..";
    start = end + 1;
  }
  if (!ok) throw Error("history: " + what + " '" + rel + "' is not a plain relative path");
}

class TreeEdit {
 public:
  TreeEdit(const Repo& impl) : impl_(impl) {
    git_index* raw = nullptr;
    check(git_index_new(&raw), "cannot create an index", impl_.path);
    index_.reset(raw);
    if (TreePtr head = impl_.head_tree())
      check(git_index_read_tree(index_.get(), head.get()), "cannot read HEAD's tree",
            impl_.path);
  }

  // Writes `data` as a blob at `path` (0100644); returns the blob id.
  git_oid put(const std::string& path, const std::string& data) {
    git_index_entry entry{};
    check(git_blob_create_from_buffer(&entry.id, impl_.repo.get(), data.data(), data.size()),
          "cannot write a blob for " + path, impl_.path);
    entry.mode = GIT_FILEMODE_BLOB;
    entry.path = path.c_str();
    check(git_index_add(index_.get(), &entry), "cannot stage " + path, impl_.path);
    return entry.id;
  }

  // Removes `path` itself or everything under it; the index leaves no empty trees.
  void remove(const std::string& path) {
    int rc = git_index_remove(index_.get(), path.c_str(), 0);
    if (rc < 0 && rc != GIT_ENOTFOUND) fail("cannot remove " + path, impl_.path);
    check(git_index_remove_directory(index_.get(), path.c_str(), 0),
          "cannot remove " + path + "/", impl_.path);
  }

  git_oid write_tree() {
    git_oid oid;
    check(git_index_write_tree_to(&oid, index_.get(), impl_.repo.get()),
          "cannot write the tree", impl_.path);
    return oid;
  }

 private:
  const Repo& impl_;
  IndexPtr index_;
};

// A patch id names one folder under patches/.
void check_id(const std::string& id) {
  check_rel(id, "patch id");
  if (id.find('/') != std::string::npos)
    throw Error("history: patch id '" + id + "' must not contain '/'");
}

// patches/<id>/: record, recipe, before/ and after/ bodies, replacing what was there.
void put_patch(TreeEdit& edit, const PatchRecord& r) {
  check_id(r.id);
  const std::string dir = "patches/" + r.id + "/";
  edit.remove("patches/" + r.id);
  std::set<std::string> seen;
  std::vector<FileBlobs> blobs;
  for (const FileRecord& f : r.files) {
    check_rel(f.rel, "file of patch " + r.id);
    // before/<rel> holds one body per rel; two records for one rel would overwrite each other.
    if (!seen.insert(f.rel).second)
      throw Error("history: patch " + r.id + " names " + f.rel + " twice");
    blobs.push_back({oid_hex(edit.put(dir + "before/" + f.rel, f.before)),
                     oid_hex(edit.put(dir + "after/" + f.rel, f.after))});
  }
  edit.put(dir + "patch.json", record_to_json(r, blobs));
  edit.put(dir + "recipe.yaml", r.recipe_text);
}

std::string full_message(const Transaction& tx) {
  std::string msg = tx.message;
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  if (!tx.trailers.empty()) {
    // git's trailer format: a last paragraph of "Key: value" lines.
    msg += "\n\n";
    for (const auto& [key, value] : tx.trailers) msg += key + ": " + value + "\n";
  } else {
    msg += "\n";
  }
  return msg;
}

}  // namespace

namespace {

// The audit trail names who ran the command: git's own identity (user.name and
// user.email, from the repository's, the user's or the system's config) when set, as
// git itself would; else the login and the host it ran on.
SignaturePtr who(git_repository* repo, const std::string& path) {
  git_signature* raw = nullptr;
  if (git_signature_default(&raw, repo) == 0) return SignaturePtr(raw);
  std::string user;
  if (const passwd* pw = ::getpwuid(::geteuid())) user = pw->pw_name;
  if (user.empty()) user = "uid" + std::to_string(::geteuid());
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0 || !*host) std::snprintf(host, sizeof host, "localhost");
  check(git_signature_now(&raw, user.c_str(), (user + "@" + host).c_str()), "cannot make a signature", path);
  return SignaturePtr(raw);
}

}  // namespace

std::string History::commit(const Transaction& tx) {
  Impl& impl = *impl_;
  TreeEdit edit(impl);
  // Order: drops, then puts (a put of a dropped id wins), then site removals, then sets.
  for (const auto& id : tx.drop) {
    check_id(id);
    edit.remove("patches/" + id);
  }
  for (const auto& r : tx.put) put_patch(edit, r);
  for (const auto& rel : tx.site_drop) {
    check_rel(rel, "site file");
    edit.remove("site/" + rel);
  }
  for (const auto& [rel, data] : tx.site) {
    check_rel(rel, "site file");
    edit.put("site/" + rel, data);
  }
  for (const auto& path : tx.pristine_drop) {
    check_rel(path, "pristine file");
    edit.remove("pristine/" + path);
  }
  for (const auto& [path, data] : tx.pristine) {
    check_rel(path, "pristine file");
    edit.put("pristine/" + path, data);
  }
  git_oid tree_oid = edit.write_tree();

  git_tree* raw_tree = nullptr;
  check(git_tree_lookup(&raw_tree, impl.repo.get(), &tree_oid), "cannot read the new tree",
        impl.path);
  TreePtr tree(raw_tree);
  SignaturePtr sig = who(impl.repo.get(), impl.path);

  impl.unpacked = impl.memory != nullptr;
  CommitPtr parent = impl.head_commit();
  const git_commit* parents[] = {parent.get()};
  git_oid oid;
  // With a parent, libgit2 refuses to move HEAD unless it still points at that parent:
  // a concurrent writer makes this fail rather than lose a commit.
  check(git_commit_create(&oid, impl.repo.get(), "HEAD", sig.get(), sig.get(), nullptr,
                          full_message(tx).c_str(), tree.get(), parent ? 1 : 0, parents),
        "cannot commit", impl.path);
  return oid_hex(oid);
}

}  // namespace sitepatch::store

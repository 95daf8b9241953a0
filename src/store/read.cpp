// Reading the applied patches back from HEAD's tree.
#include <algorithm>

#include "store/history_impl.hpp"
#include "store/record.hpp"

namespace sitepatch::store {

using namespace detail;

namespace {

// One patches/<id>/ folder -> its record with bodies; nullopt when it has no patch.json.
std::optional<PatchRecord> load(const Repo& impl, const git_tree* tree,
                                const std::string& id) {
  const std::string dir = "patches/" + id + "/";
  auto json = impl.read_path(tree, dir + "patch.json");
  if (!json) return std::nullopt;
  std::vector<FileBlobs> blobs;
  PatchRecord r = record_from_json(*json, impl.path + ":" + dir + "patch.json", blobs);
  r.id = id;  // the folder is what commit() and drop act on
  r.recipe_text = impl.read_path(tree, dir + "recipe.yaml").value_or("");
  for (size_t i = 0; i < r.files.size(); ++i) {
    FileRecord& f = r.files[i];
    // Bodies come from before/<rel> and after/<rel>; the blob id in the record is
    // the fallback should the path be missing.
    auto body = [&](const std::string& side, const std::string& hex) {
      if (auto b = impl.read_path(tree, dir + side + "/" + f.rel)) return *b;
      git_oid oid;
      if (hex.empty() || git_oid_fromstr(&oid, hex.c_str()) < 0)
        fail("patch " + id + " has no " + side + " body for " + f.rel, impl.path);
      return impl.read_blob(oid);
    };
    f.before = body("before", blobs[i].before);
    f.after = body("after", blobs[i].after);
  }
  return r;
}

bool plain_component(const std::string& id) {
  return !id.empty() && id != "." && id != ".." && id.find('/') == std::string::npos;
}

}  // namespace

std::vector<PatchRecord> History::patches() const {
  std::vector<PatchRecord> out;
  TreePtr tree = impl_->head_tree();
  if (!tree) return out;
  git_tree_entry* raw = nullptr;
  int rc = git_tree_entry_bypath(&raw, tree.get(), "patches");
  if (rc == GIT_ENOTFOUND) return out;
  check(rc, "cannot read patches/", impl_->path);
  TreeEntryPtr entry(raw);
  if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) return out;
  std::vector<std::string> ids;
  {
    git_tree* sub = nullptr;
    check(git_tree_lookup(&sub, impl_->repo.get(), git_tree_entry_id(entry.get())),
          "cannot read patches/", impl_->path);
    TreePtr patches(sub);
    for (size_t i = 0, n = git_tree_entrycount(patches.get()); i < n; ++i) {
      const git_tree_entry* e = git_tree_entry_byindex(patches.get(), i);
      if (git_tree_entry_type(e) == GIT_OBJECT_TREE) ids.emplace_back(git_tree_entry_name(e));
    }
  }
  std::sort(ids.begin(), ids.end());
  for (const auto& id : ids)
    if (auto r = load(*impl_, tree.get(), id)) out.push_back(std::move(*r));
  return out;
}

std::optional<PatchRecord> History::patch(const std::string& id) const {
  if (!plain_component(id)) return std::nullopt;
  TreePtr tree = impl_->head_tree();
  if (!tree) return std::nullopt;
  return load(*impl_, tree.get(), id);
}

std::optional<std::string> History::pristine_file(const std::string& path) const {
  if (path.empty() || path.front() == '/') return std::nullopt;
  TreePtr tree = impl_->head_tree();
  if (!tree) return std::nullopt;
  return impl_->read_path(tree.get(), "pristine/" + path);
}

std::optional<std::string> History::site_file(const std::string& rel) const {
  if (rel.empty() || rel.front() == '/') return std::nullopt;
  TreePtr tree = impl_->head_tree();
  if (!tree) return std::nullopt;
  return impl_->read_path(tree.get(), "site/" + rel);
}

}  // namespace sitepatch::store

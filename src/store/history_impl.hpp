#pragma once
// Private to the store: what a History holds, and HEAD helpers its files share.
#include "sitepatch/store/history.hpp"
#include "store/git.hpp"

#include <optional>
#include <string>

namespace sitepatch::store {

namespace detail {

/// The open repository and its folder; History::Impl is one (History::Impl itself is
/// private to History, so helpers in the store's other files take a Repo).
struct Repo {
  detail::RepoPtr repo;
  std::string path;

  /// HEAD's commit; empty while the branch is unborn.
  detail::CommitPtr head_commit() const;
  /// HEAD's tree; empty while the branch is unborn.
  detail::TreePtr head_tree() const;
  /// The bytes of the blob at `path` in `tree`; nullopt when there is none.
  std::optional<std::string> read_path(const git_tree* tree, const std::string& path) const;
  /// The bytes of blob `oid`.
  std::string read_blob(const git_oid& oid) const;
};

}  // namespace detail

struct History::Impl : detail::Repo {
  /// A travelling history's in-memory object store (libgit2's mempack), owned by the
  /// repository's odb; null otherwise.
  git_odb_backend* memory = nullptr;
  /// Objects are in `memory` that pack() has not written yet.
  bool unpacked = false;
  /// The commit whose objects are all on disk (HEAD at open, then at each pack()); what
  /// pack() writes is what the commits after it added.
  std::optional<git_oid> packed;
};

}  // namespace sitepatch::store

#pragma once
// Private to the store: libgit2 start-up, error reporting and owning pointers.
#include <git2.h>

#include <memory>
#include <string>

namespace sitepatch::store::detail {

/// Calls git_libgit2_init once per process (libgit2 counts its users; we never shut down),
/// on a thread of its own (warm_up.hpp).
void start_libgit2();

/// start_libgit2(), then waits until libgit2 is ready.
void init_libgit2();

/// Throws sitepatch::Error: "<what> (<repo>): <libgit2's last message>".
[[noreturn]] void fail(const std::string& what, const std::string& repo);

/// Throws through fail() when a libgit2 call returned an error code.
inline void check(int rc, const std::string& what, const std::string& repo) {
  if (rc < 0) fail(what, repo);
}

std::string oid_hex(const git_oid& oid);

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Deleter<T, Free>>;

using RepoPtr = Owned<git_repository, git_repository_free>;
using TreePtr = Owned<git_tree, git_tree_free>;
using TreeEntryPtr = Owned<git_tree_entry, git_tree_entry_free>;
using CommitPtr = Owned<git_commit, git_commit_free>;
using BlobPtr = Owned<git_blob, git_blob_free>;
using IndexPtr = Owned<git_index, git_index_free>;
using SignaturePtr = Owned<git_signature, git_signature_free>;
using RevwalkPtr = Owned<git_revwalk, git_revwalk_free>;
using PatchPtr = Owned<git_patch, git_patch_free>;

}  // namespace sitepatch::store::detail

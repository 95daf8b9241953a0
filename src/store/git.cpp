// libgit2 start-up and error reporting shared by the store's files.
#include "store/git.hpp"

#include "sitepatch/util/error.hpp"

namespace sitepatch::store::detail {

void init_libgit2() {
  // A function-local static runs once, thread-safely.
  static const int once = git_libgit2_init();
  (void)once;
}

void fail(const std::string& what, const std::string& repo) {
  const git_error* e = git_error_last();
  std::string msg = "history: " + what;
  if (!repo.empty()) msg += " (" + repo + ")";
  msg += ": ";
  msg += (e && e->message) ? e->message : "unknown libgit2 error";
  throw Error(msg);
}

std::string oid_hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

}  // namespace sitepatch::store::detail

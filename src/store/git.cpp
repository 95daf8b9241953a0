// libgit2 start-up and error reporting shared by the store's files.
#include "store/git.hpp"

#include <cerrno>
#include <cstring>
#include <future>
#include <mutex>

#include "sitepatch/store/warm_up.hpp"
#include "sitepatch/util/error.hpp"

namespace sitepatch::store::detail {

static std::once_flag started;
static std::shared_future<int> initialized;  // valid once start_libgit2 ran

void start_libgit2() {
  std::call_once(started, [] {
    // std::launch::async: a thread now, not at the first wait. main settles it before
    // returning (warm_up.hpp).
    initialized = std::async(std::launch::async, [] { return git_libgit2_init(); }).share();
  });
}

void init_libgit2() {
  start_libgit2();
  initialized.wait();
}

void fail(const std::string& what, const std::string& repo) {
  int os_error = errno;  // libgit2 does not always say why a system call failed
  const git_error* e = git_error_last();
  std::string msg = "history: " + what;
  if (!repo.empty()) msg += " (" + repo + ")";
  msg += ": ";
  if (e && e->message && *e->message) msg += e->message;
  else if (os_error) msg += std::strerror(os_error);
  else msg += "libgit2 gave no reason";
  // A failed write to the history is often a full disk or a read-only folder: say so
  // even when libgit2's own message leaves the system's reason out.
  if (os_error && msg.find(std::strerror(os_error)) == std::string::npos &&
      (os_error == ENOSPC || os_error == EROFS || os_error == EACCES || os_error == EDQUOT))
    msg += std::string(" (") + std::strerror(os_error) + ")";
  throw Error(msg);
}

std::string oid_hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

}  // namespace sitepatch::store::detail

namespace sitepatch::store {

void warm_up() { detail::start_libgit2(); }

void settle() {
  if (detail::initialized.valid()) detail::initialized.wait();
}

}  // namespace sitepatch::store

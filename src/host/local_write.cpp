// All-or-nothing writes on this machine: check every file, stage every temp (fsync'd),
// then rename in order, each original kept as a hard link until all renames are made
// so a failed rename can put the earlier ones back without needing disk space.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "host/agent_client.hpp"
#include "host/local_files.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/parallel.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::host {
namespace {


std::string real_or_self(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (!r) return path;
  std::string out = r;
  std::free(r);
  return out;
}

struct Target {
  std::string path;    // where the bytes go: a symlink's target, so the link stays a link
  std::string within;  // real path of the folder it must stay inside ("" = anywhere)
  bool exists = false;
  struct stat st {};
  std::string original;  // its bytes, to rewrite if no backup link can be made
};

Target check(const WriteRequest& f) {
  Target t;
  t.path = f.path;
  struct stat lst;
  if (::lstat(f.path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) t.path = real_or_self(f.path);
  // Whoever may write a folder on the way may swap a name in it for a link.
  for (auto& folder : std::set<std::string>{folder_of(f.path), folder_of(t.path)})
    if (auto why = util::unsafe_path(folder)) throw Error(unsafe_write_message(f.path, *why));
  if (!f.within.empty()) t.within = real_or_self(f.within);
  std::string found;
  if (::stat(t.path.c_str(), &t.st) == 0) {
    if (S_ISDIR(t.st.st_mode)) throw Error(f.path + " is a folder; nothing was written");
    auto content = util::read_file(t.path);
    if (!content) throw Error(content.error() + "; nothing was written");
    t.exists = true;
    found = util::sha256_hex(*content);
    t.original = std::move(*content);
  } else if (!missing(errno)) {
    throw Error(f.path + ": " + std::strerror(errno) + "; nothing was written");
  }
  if (found != f.expected_sha256) throw Error(changed_since_read(f.path, f.expected_sha256, found));
  return t;
}

std::string base_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

/// One file between staging and the end of the batch.
struct Staged {
  std::unique_ptr<util::AtomicFile> tmp;
  std::string base;
  std::string backup;  // hard link to the original while the batch is under way
  bool renamed = false;
};

Staged stage(const WriteRequest& f, const Target& t, const std::string& tag) {
  if (!t.exists) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(t.path).parent_path(), ec);
  }
  Staged s;
  s.base = base_of(t.path);
  s.tmp = std::make_unique<util::AtomicFile>(t.path, t.exists ? int(t.st.st_mode & 07777) : 0644, tag);
  if (!t.within.empty()) {
    // The folder as the kernel opened it: a symlink swapped in after the check cannot
    // move the write outside.
    std::string real = s.tmp->dir().real_path();
    if (!util::inside(real, t.within)) throw Error(outside_message(f.path, real, t.within));
  }
  s.tmp->write(f.content);
  if (t.exists && ::geteuid() == 0 && (t.st.st_uid != 0 || t.st.st_gid != 0))
    (void)!::fchownat(s.tmp->dir().fd(), s.tmp->tmp_name().c_str(), t.st.st_uid, t.st.st_gid,
                      AT_SYMLINK_NOFOLLOW);
  s.tmp->stage();
  return s;
}

/// Puts back what renames 0..n-1 replaced; returns the files it could not put back.
std::vector<std::string> put_back(std::vector<Staged>& staged, const std::vector<WriteRequest>& files,
                                  const std::vector<Target>& targets, const std::string& tag) {
  std::vector<std::string> stuck;
  for (size_t i = staged.size(); i-- > 0;) {
    Staged& s = staged[i];
    if (!s.renamed) continue;
    int dfd = s.tmp->dir().fd();
    bool ok = false;
    if (!s.backup.empty()) {
      ok = ::renameat(dfd, s.backup.c_str(), dfd, s.base.c_str()) == 0;
    } else if (!targets[i].exists) {
      ok = ::unlinkat(dfd, s.base.c_str(), 0) == 0;
    } else {
      try {  // no link could be made: the original bytes are rewritten
        util::AtomicFile back(targets[i].path, int(targets[i].st.st_mode & 07777), tag);
        back.write(targets[i].original);
        back.commit();
        ok = true;
      } catch (const Error&) {
      }
    }
    if (ok) {
      s.renamed = false;
      s.backup.clear();
      ::fsync(dfd);
    } else {
      stuck.push_back(files[i].path);
    }
  }
  return stuck;
}

}  // namespace

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string unsafe_write_message(const std::string& path, const std::string& why) {
  return "refusing to write " + path + ": " + why +
         ", who could redirect the write; run sitepatch as that user or make the folder writable only by you; "
         "nothing was written";
}

std::string outside_message(const std::string& path, const std::string& real_dir, const std::string& within) {
  return "refusing to write " + path + ": its folder is " + real_dir + ", outside " + within +
         " (a symbolic link leads out); nothing was written";
}

void write_local(const std::vector<WriteRequest>& files, const std::string& tag) {
  // 1. Compare every file first: when one changed, nothing is written.
  std::vector<Target> targets;
  for (auto& f : files) targets.push_back(check(f));

  // 2. Every temp written and fsync'd (on threads: the fsyncs overlap). A failure here
  //    (disk full, a folder nobody may write) leaves every file as it was: the
  //    destructors remove the temps.
  std::vector<Staged> staged(files.size());
  try {
    util::parallel_for(files.size(), [&](size_t i) { staged[i] = stage(files[i], targets[i], tag); });
  } catch (const Error& e) {
    std::string what = e.what();
    throw Error(what + (util::ends_with(what, "nothing was written") ? "" : "; nothing was written"));
  }

  // 3. Renames in order, each original kept as a link until the end.
  for (size_t i = 0; i < files.size(); ++i) {
    Staged& s = staged[i];
    int dfd = s.tmp->dir().fd();
    if (targets[i].exists) {
      for (int attempt = 0; s.backup.empty() && attempt < 8; ++attempt) {
        std::string name = util::temp_name(s.base, tag, ".orig");
        if (::linkat(dfd, s.base.c_str(), dfd, name.c_str(), 0) == 0) s.backup = name;
        else if (errno != EEXIST) break;  // no link (EPERM, EMLINK): undo rewrites instead
      }
    }
    try {
      s.tmp->commit(false);  // the folders are fsync'd once each, below
      s.renamed = true;
    } catch (const Error& e) {
      auto stuck = put_back(staged, files, targets, tag);
      if (!stuck.empty()) {
        std::string msg = std::string(e.what()) + "\nthe files written before it could not all be put back:";
        for (auto& p : stuck) msg += "\n  " + p + ": has the new bytes";
        throw PartialWriteError(msg, stuck);
      }
      throw Error(std::string(e.what()) + "; nothing was written" +
                  (i ? " (the " + std::to_string(i) + " file(s) replaced before it were put back)" : ""));
    }
  }
  for (auto& s : staged)
    if (!s.backup.empty()) ::unlinkat(s.tmp->dir().fd(), s.backup.c_str(), 0);
  // Each folder's new entries made durable once, the folders in parallel.
  std::vector<int> folders;
  std::set<std::string> seen;
  for (auto& s : staged)
    if (seen.insert(s.tmp->dir().path()).second) folders.push_back(s.tmp->dir().fd());
  util::parallel_for(folders.size(), [&](size_t i) { ::fsync(folders[i]); });
}

}  // namespace sitepatch::host

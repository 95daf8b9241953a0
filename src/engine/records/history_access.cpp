#include "engine/records/history_access.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch/util/temp_folder.hpp"

namespace fs = std::filesystem;

namespace sitepatch::engine::detail {

Mirror::~Mirror() {
  std::error_code ec;
  if (!dir.empty()) fs::remove_all(dir, ec);
}

namespace {

// A copy of a remote history kept on this machine between commands
// ($XDG_CACHE_HOME/sitepatch/remote/<host and folder>), so a command fetches only what
// changed since the last one instead of the whole history. Only bytes are saved by it:
// the remote answers from its own files, so a stale or foreign copy is never believed.
std::string cache_dir(Session& s) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string base = xdg && *xdg ? xdg : home && *home ? std::string(home) + "/.cache" : "";
  if (base.empty()) return "";
  std::string dir = base + "/sitepatch/remote/" + util::sha256_hex(s.host.name() + "\n" + s.state_dir).substr(0, 24);
  // Files in it are read as the history's and deleted when the remote lacks them: only
  // in folders nobody else can swap for a link. Without it a command fetches more bytes.
  if (auto why = util::make_safe_folder(dir)) {
    spdlog::warn("not keeping a copy of the remote history in {}: {}", dir, *why);
    return "";
  }
  return dir;
}

std::map<std::string, std::string> read_cache(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->is_symlink() || util::is_leftover_temp(it->path().filename().string()))
      continue;
    std::string path = it->path().string();
    auto bytes = util::read_file(path);
    if (bytes) out[path.substr(dir.size() + 1)] = std::move(*bytes);
  }
  return out;
}

// Best effort: a cache that cannot be written costs bytes next time, nothing else.
void write_cache(const std::string& dir, const std::map<std::string, std::string>& had,
                 const std::map<std::string, std::string>& now) {
  if (dir.empty()) return;
  try {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      fs::create_directories(dir);
      fs::permissions(dir, fs::perms::owner_all);  // the history names what was patched where
    }
    for (auto& [rel, bytes] : now) {
      auto old = had.find(rel);
      if (old != had.end() && old->second == bytes) continue;
      fs::path p = fs::path(dir) / rel;
      fs::create_directories(p.parent_path());
      util::AtomicFile f(p.string(), 0600);
      f.write(bytes);
      f.commit_unsynced();  // a copy: the remote's files decide what is true
    }
    for (auto& [rel, _] : had)
      if (!now.count(rel)) fs::remove(fs::path(dir) / rel, ec);
  } catch (const std::exception& e) {
    spdlog::debug("history: cannot keep a copy in {}: {}", dir, e.what());
  }
}

// In the command's private temp folder: a name already there is an error, not a file to follow.
void write_new(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  while (ok && !bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) bytes.remove_prefix(size_t(n));
  }
  int e = errno;
  if (fd >= 0 && ::close(fd) != 0 && ok) ok = false, e = errno;
  if (!ok) throw Error("cannot write " + path + " (a local copy of the history): " + std::strerror(e));
}

std::shared_ptr<Mirror> fetch(Session& s) {
  auto m = std::make_shared<Mirror>();
  m->dir = util::make_temp_folder("history");
  // libgit2 reads the copy as the history: a folder another user could swap would be
  // theirs to write.
  if (auto why = util::unsafe_path(m->dir)) {
    ::rmdir(m->dir.c_str());
    throw Error("refusing to keep the history's working copy in " + util::temp_root() + ": " + *why +
                "; set TMPDIR to a folder only you can change");
  }
  m->cache = cache_dir(s);
  auto had = read_cache(m->cache);
  auto snap = s.host.snapshot(s.state_dir, {"sitepatch.lock"}, had);
  m->existed = snap.has_value();
  if (snap) {
    std::set<std::string> folders;
    for (auto& [rel, bytes] : *snap) {
      if (auto why = site::unsafe_relative_path(rel))
        throw Error(s.host.name() + ": unexpected file in " + s.state_dir + ": " + rel);
      std::string p = m->dir + "/" + rel, folder = p.substr(0, p.rfind('/'));
      if (folders.insert(folder).second) fs::create_directories(folder);
      // The copy kept between commands is replaced by rename, never rewritten, and
      // libgit2 writes new files only: a link stands in for the bytes.
      auto kept = had.find(rel);
      if (kept != had.end() && kept->second == bytes && ::link((m->cache + "/" + rel).c_str(), p.c_str()) == 0)
        continue;
      write_new(p, bytes);
    }
    // A snapshot carries files, not folders: the empty ones a repository has (one made on
    // the host itself keeps loose objects, and no pack yet) are made here for libgit2.
    for (const char* d : {"objects/pack", "objects/info", "refs/heads", "refs/tags"})
      fs::create_directories(m->dir + "/" + d);
    m->remote = std::move(*snap);
  }
  m->cached = m->remote;  // only names checked above reach this machine's folders
  write_cache(m->cache, had, m->cached);
  size_t kept = 0;
  for (auto& [rel, bytes] : m->remote)
    if (auto it = had.find(rel); it != had.end() && it->second == bytes)
      ++kept;
    else
      spdlog::debug("history: fetched {}", rel);
  spdlog::info("history: {} file(s) in {}:{}, {} fetched, {} already in {}", m->remote.size(), s.host.name(),
               s.state_dir, m->remote.size() - kept, kept, m->cache.empty() ? "(no copy)" : m->cache);
  return m;
}

}  // namespace

std::unique_ptr<HistoryAccess> HistoryAccess::open(Session& s, bool create, bool writer) {
  std::string dir = s.state_dir;
  if (!s.host.local()) {
    // Reusing a copy fetched before: no request may follow a lock taken since, so its
    // answer is waited for here (the fetch would have brought it).
    if (!s.mirror) s.mirror = fetch(s);
    else s.host.confirm();
    if (!s.mirror->existed && !create) return nullptr;
    dir = s.mirror->dir;
  }
  auto h = store::History::open(dir, create, !s.host.local());
  if (!h) return nullptr;
  std::unique_ptr<HistoryAccess> access(new HistoryAccess(s, std::move(h)));
  access->recorded_prefix_ = bind_history(s, writer || create);
  return access;
}

std::vector<std::vector<host::DirEntry>> HistoryAccess::listing(Session& s, const std::vector<std::string>& dirs) {
  if (s.mirror) return s.host.list_many(dirs);  // fetched under an earlier lock: not what is there now
  s.mirror = fetch(s);
  std::vector<std::vector<host::DirEntry>> out(dirs.size());
  for (auto& [rel, _] : s.mirror->remote) {
    std::string path = s.state_dir + "/" + rel;
    size_t slash = path.rfind('/');
    for (size_t i = 0; i < dirs.size(); ++i)
      if (path.compare(0, slash, dirs[i]) == 0 && dirs[i].size() == slash)
        out[i].push_back({path.substr(slash + 1), false});
  }
  return out;
}

void HistoryAccess::forget(Session& s, const std::vector<std::string>& paths) {
  if (!s.mirror) return;
  std::error_code ec;
  for (auto& p : paths) {
    if (!util::starts_with(p, s.state_dir + "/")) continue;
    std::string rel = p.substr(s.state_dir.size() + 1);
    s.mirror->remote.erase(rel);
    fs::remove(s.mirror->dir + "/" + rel, ec);
    // Nor kept between commands: a leftover temp's name is one read_cache never lists.
    if (s.mirror->cached.erase(rel) && !s.mirror->cache.empty()) fs::remove(s.mirror->cache + "/" + rel, ec);
  }
}

namespace {

/// Why a record's file is not one of this environment's: its site folder is not one of
/// the folders it patches (a relative one may name a folder the prefix no longer has),
/// or its name leads out of that folder. A history copied with a venv, or planted in one,
/// must not steer a write or a read anywhere else.
std::optional<std::string> foreign_file(const Session& s, const std::string& stored, const std::string& live,
                                        const std::string& rel) {
  if (auto why = site::unsafe_relative_path(rel)) return "the file " + util::printable(rel) + " (" + *why + ")";
  if (std::find(s.env.site_dirs.begin(), s.env.site_dirs.end(), live) != s.env.site_dirs.end()) return std::nullopt;
  if (!stored.empty() && stored[0] != '/' && !site::unsafe_relative_path(stored)) return std::nullopt;
  return "a file in " + util::printable(stored) + ", which is none of this environment's site folders";
}

}  // namespace

std::vector<store::PatchRecord> HistoryAccess::patches() const {
  auto out = h_->patches();
  for (auto& r : out) {
    if (!recipe::valid_id(r.id))
      throw Error("the history in " + s_.state_dir + " records a patch whose id " + util::printable(r.id) +
                  " is no recipe id; inspect the history (git --git-dir " + s_.state_dir +
                  " log -p) and remove it if it was not made here");
    for (auto& f : r.files) {
      std::string stored = f.site_dir;
      f.site_dir = live_site_dir(s_, stored, recorded_prefix_);
      if (auto why = foreign_file(s_, stored, f.site_dir, f.rel))
        throw Error("the history in " + s_.state_dir + " records patch " + util::printable(r.id) + " with " + *why +
                    "; sitepatch reads and writes only inside the environment's site folders: inspect the history "
                    "(git --git-dir " + s_.state_dir + " log -p) and remove it if it was not made here");
    }
  }
  return out;
}

std::string HistoryAccess::commit(const store::Transaction& tx) {
  auto t0 = std::chrono::steady_clock::now();
  auto ms = [&t0] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  store::Transaction stored = tx;
  for (auto& r : stored.put)
    for (auto& f : r.files) f.site_dir = stored_site_dir(s_, f.site_dir);
  std::string oid = h_->commit(stored);
  if (!s_.host.local()) {
    double committed = ms();
    h_->pack();  // a few files to send and to fetch next time, not one per object
    double packed = ms();
    publish();
    spdlog::debug("history: commit {:.0f} ms, pack {:.0f} ms, publish {:.0f} ms", committed, packed - committed,
                  ms() - packed);
  }
  return oid;
}

void HistoryAccess::publish() {
  Mirror& m = *s_.mirror;
  // Objects are named by their content and never change: they go first in the one
  // batch (the agent writes in order), so a ref never points at something missing.
  std::vector<host::WriteRequest> objects, refs;
  std::map<std::string, std::string> now;
  for (auto& e : fs::recursive_directory_iterator(m.dir)) {
    if (!e.is_regular_file()) continue;
    std::string rel = e.path().string().substr(m.dir.size() + 1);
    auto bytes = util::read_file(e.path().string());
    if (!bytes) throw Error(bytes.error());
    auto old = m.remote.find(rel);
    if (old != m.remote.end() && old->second == *bytes) continue;
    host::WriteRequest w{s_.state_dir + "/" + rel, *bytes,
                         old == m.remote.end() ? "" : util::sha256_hex(old->second), s_.state_dir};
    (util::starts_with(rel, "objects/") ? objects : refs).push_back(std::move(w));
    now[rel] = std::move(*bytes);
  }
  size_t n_objects = objects.size(), n_refs = refs.size();
  objects.insert(objects.end(), std::make_move_iterator(refs.begin()), std::make_move_iterator(refs.end()));
  if (!objects.empty()) s_.host.write(objects);
  // What packing made redundant goes only after the new pack is there.
  std::vector<std::string> gone;
  for (auto it = m.remote.begin(); it != m.remote.end();) {
    if (!fs::exists(fs::path(m.dir) / it->first)) {
      gone.push_back(s_.state_dir + "/" + it->first);
      it = m.remote.erase(it);
    } else {
      ++it;
    }
  }
  if (!gone.empty()) s_.host.remove(gone);
  for (auto& [rel, bytes] : now) m.remote[rel] = std::move(bytes);
  m.existed = true;
  write_cache(m.cache, m.cached, m.remote);  // what was sent need not come back
  m.cached = m.remote;
  spdlog::info("history: sent {} object file(s) and {} other file(s) to {}, removed {}", n_objects, n_refs,
               s_.host.name(), gone.size());
}

}  // namespace sitepatch::engine::detail

// The machine this process runs on: files through system calls, Python facts and
// compile() through one agent process run by the environment's own interpreter.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "host/agent_client.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/parallel.hpp"

namespace sitepatch::host {
namespace {

std::string errno_text(const std::string& path, int e) { return path + ": " + std::strerror(e); }

bool missing(int e) { return e == ENOENT || e == ENOTDIR; }

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) throw Error(std::string("getcwd: ") + std::strerror(errno));
  return std::string(buf) + "/" + path;
}

std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The interpreter of `venv`: a root with bin/python3 or bin/python, or a Python
/// executable itself. Never resolves symlinks: a venv's python is a link whose
/// target would report the base installation instead of the venv.
std::string find_python(const std::string& venv) {
  struct stat st;
  if (::stat(venv.c_str(), &st) != 0) {
    if (missing(errno)) throw Error("no Python environment at " + venv + ": " + venv + " does not exist");
    throw Error("no Python environment at " + venv + ": " + errno_text(venv, errno));
  }
  std::string root = venv;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (S_ISDIR(st.st_mode)) {
    for (const char* name : {"/bin/python3", "/bin/python"}) {
      std::string candidate = root + name;
      struct stat cs;
      if (::stat(candidate.c_str(), &cs) == 0 && S_ISREG(cs.st_mode) &&
          ::access(candidate.c_str(), X_OK) == 0)
        return absolute(candidate);
    }
    throw Error(venv + " is not a Python environment: no bin/python3 or bin/python in it");
  }
  if (!S_ISREG(st.st_mode) || ::access(venv.c_str(), X_OK) != 0)
    throw Error(venv + " is not a Python environment: it is neither a folder nor an executable");
  return absolute(root);
}

class FileLock : public Lock {
 public:
  explicit FileLock(int fd) : fd_(fd) {}
  ~FileLock() override { ::close(fd_); }  // closing releases the flock

 private:
  int fd_;
};

class LocalHost : public Host {
 public:
  std::string name() const override { return "local"; }
  bool local() const override { return true; }

  std::optional<std::map<std::string, std::string>> snapshot(
      const std::string& dir, const std::vector<std::string>& skip) override {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return std::nullopt;
    std::map<std::string, std::string> files;
    for (auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file() || e.is_symlink()) continue;
      std::string rel = fs::relative(e.path(), dir).string();
      if (std::find(skip.begin(), skip.end(), rel) != skip.end()) continue;
      auto content = util::read_file(e.path().string());
      if (!content) throw Error(content.error());
      files[rel] = std::move(*content);
    }
    return files;
  }

  site::Environment probe(const std::string& venv) override {
    std::string python = find_python(venv);
    if (!agent_ || python_ != python) {
      agent_.reset();
      agent_ = std::make_unique<AgentClient>(agent_argv(python), python);
      python_ = python;
    }
    return agent_->hello();
  }

  std::vector<FileData> read(const std::vector<std::string>& paths) override {
    std::vector<FileData> out;
    out.reserve(paths.size());
    for (auto& path : paths) {
      FileData f;
      f.path = path;
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) {
        if (!missing(errno)) throw Error(errno_text(path, errno));
        out.push_back(std::move(f));
        continue;
      }
      f.exists = true;
      f.is_dir = S_ISDIR(st.st_mode);
      f.mode = st.st_mode & 07777;
      f.nlink = st.st_nlink;
      if (!f.is_dir) {
        auto content = util::read_file(path);
        if (!content) throw Error(content.error());
        f.content = std::move(*content);
      }
      out.push_back(std::move(f));
    }
    return out;
  }

  std::vector<DirEntry> list(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
      if (missing(errno)) return {};
      throw Error(errno_text(dir, errno));
    }
    std::vector<DirEntry> out;
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      bool is_dir = e->d_type == DT_DIR;
      if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
        struct stat st;
        is_dir = ::stat((dir + "/" + n).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      }
      out.push_back({std::move(n), is_dir});
    }
    ::closedir(d);
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
    return out;
  }

  std::vector<std::optional<std::string>> realpath(const std::vector<std::string>& paths) override {
    std::vector<std::optional<std::string>> out;
    for (auto& p : paths) {
      char* r = ::realpath(p.c_str(), nullptr);
      if (!r) {
        if (!missing(errno)) throw Error(errno_text(p, errno));
        out.push_back(std::nullopt);
        continue;
      }
      out.push_back(std::string(r));
      std::free(r);
    }
    return out;
  }

  void write(const std::vector<WriteRequest>& files) override {
    // Compare every file first: when one changed, nothing is written.
    struct Target {
      std::string path;  // a symlink's target, so the link stays a link
      bool exists;
      struct stat st;
    };
    std::vector<Target> targets;
    for (auto& f : files) {
      Target t{f.path, false, {}};
      struct stat lst;
      if (::lstat(f.path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char* r = ::realpath(f.path.c_str(), nullptr);
        if (r) {
          t.path = r;
          std::free(r);
        }
      }
      std::string found;
      if (::stat(t.path.c_str(), &t.st) == 0) {
        if (S_ISDIR(t.st.st_mode)) throw Error(f.path + " is a folder; nothing was written");
        auto content = util::read_file(t.path);
        if (!content) throw Error(content.error() + "; nothing was written");
        t.exists = true;
        found = util::sha256_hex(*content);
      } else if (!missing(errno)) {
        throw Error(errno_text(f.path, errno) + "; nothing was written");
      }
      if (found != f.expected_sha256) throw Error(changed_since_read(f.path, f.expected_sha256, found));
      targets.push_back(t);
    }
    // Each file is its own temp + fsync + rename; their fsyncs overlap on threads.
    util::parallel_for(files.size(), [&](size_t i) {
      const Target& t = targets[i];
      if (!t.exists) {
        std::error_code ec;
        std::filesystem::create_directories(parent_of(t.path), ec);
      }
      util::AtomicFile out(t.path, t.exists ? int(t.st.st_mode & 07777) : 0644);
      out.write(files[i].content);
      out.commit();  // a new inode: other hard links keep the old bytes
      if (t.exists && ::geteuid() == 0 && (t.st.st_uid != 0 || t.st.st_gid != 0))
        (void)!::chown(t.path.c_str(), t.st.st_uid, t.st.st_gid);
    });
  }

  void remove(const std::vector<std::string>& paths) override {
    for (auto& p : paths)
      if (::unlink(p.c_str()) != 0 && !missing(errno)) throw Error(errno_text(p, errno));
  }

  std::vector<CompileResult> compile(const std::vector<CompileRequest>& sources) override {
    if (sources.empty()) return {};
    if (!agent_) throw Error("internal: compile() before probe(): no Python to compile with");
    return agent_->compile(sources);
  }

  std::unique_ptr<Lock> lock(const std::string& path, int timeout_ms) override {
    std::error_code ec;
    std::filesystem::create_directories(parent_of(path), ec);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot create lock " + errno_text(path, errno));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) {
        int e = errno;
        ::close(fd);
        if (e != EWOULDBLOCK) throw Error("cannot lock " + errno_text(path, e));
        throw Error(lock_held(path));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Who holds it, for a human who looks.
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) (void)!::write(fd, pid.data(), pid.size());
    return std::make_unique<FileLock>(fd);
  }

 private:
  std::unique_ptr<AgentClient> agent_;  // one Python process for the whole command
  std::string python_;
};

}  // namespace

std::unique_ptr<Host> make_local_host() { return std::make_unique<LocalHost>(); }

}  // namespace sitepatch::host

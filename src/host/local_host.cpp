// The machine this process runs on: files through system calls, Python facts and
// compile() through one agent process run by the environment's own interpreter.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "host/agent_boot.hpp"
#include "host/agent_client.hpp"
#include "host/local_files.hpp"
#include "host/start_check.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/safe_path.hpp"

namespace sitepatch::host {
namespace {

std::string errno_text(const std::string& path, int e) { return path + ": " + std::strerror(e); }


std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) throw Error(std::string("getcwd: ") + std::strerror(errno));
  return std::string(buf) + "/" + path;
}

/// The interpreter of `venv`: a root with bin/python3 or bin/python, or a Python
/// executable itself. Never resolves symlinks: a venv's python is a link whose
/// target would report the base installation instead of the venv.
std::string find_python(const std::string& venv) {
  struct stat st;
  if (::stat(venv.c_str(), &st) != 0) {
    // A path that names no environment is the caller's to fix, as "no environment given"
    // is: exit 2.
    if (missing(errno)) throw Error("no Python environment at " + venv + ": " + venv + " does not exist", Exit::usage);
    throw Error("no Python environment at " + venv + ": " + errno_text(venv, errno), Exit::usage);
  }
  std::string root = venv;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (S_ISDIR(st.st_mode)) {
    std::string why;  // a python that is there but cannot be run by this user: why not
    for (const char* name : {"/bin/python3", "/bin/python"}) {
      std::string candidate = root + name;
      struct stat cs, ls;
      if (::stat(candidate.c_str(), &cs) == 0 && S_ISREG(cs.st_mode) &&
          ::access(candidate.c_str(), X_OK) == 0)
        return absolute(candidate);
      if (!why.empty() || ::lstat(candidate.c_str(), &ls) != 0) continue;
      int err = ::stat(candidate.c_str(), &cs) != 0 ? errno : EACCES;
      why = S_ISLNK(ls.st_mode) ? candidate + " is a link to " + util::link_target(candidate) + ", which you cannot run (" +
                                      std::strerror(err) + ")"
                                : candidate + " is there, but you cannot run it (" + std::strerror(err) + ")";
    }
    if (!why.empty()) throw Error(venv + " is not a Python environment you can use: " + why, Exit::usage);
    throw Error(venv + " is not a Python environment: no bin/python3 or bin/python in it", Exit::usage);
  }
  if (!S_ISREG(st.st_mode) || ::access(venv.c_str(), X_OK) != 0)
    throw Error(venv + " is not a Python environment: it is neither a folder nor an executable", Exit::usage);
  return absolute(root);
}

class LocalHost : public Host {
 public:
  std::string name() const override { return "local"; }
  bool local() const override { return true; }

  std::optional<std::map<std::string, std::string>> snapshot(
      const std::string& dir, const std::vector<std::string>& skip,
      const std::map<std::string, std::string>& /*have: reading is as cheap as comparing*/) override {
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
    refuse_unsafe_python(venv, python);
    if (!agent_ || python_ != python) {
      agent_.reset();
      agent_ = std::make_unique<AgentClient>(agent_boot_argv(python), python, agent_boot_payload());
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

  // One file in memory at a time: the class statements of a whole package (torch's
  // thousands of files) are a few rows, its bytes are hundreds of megabytes.
  std::vector<FileData> read_lines(const std::vector<std::string>& paths,
                                   const std::vector<std::string>& needles) override {
    std::vector<FileData> out;
    out.reserve(paths.size());
    for (auto& path : paths) {
      auto one = read({path});
      one[0].content = lines_holding(one[0].content, needles);
      out.push_back(std::move(one[0]));
    }
    return out;
  }

  std::vector<FileStat> stat(const std::vector<std::string>& paths) override {
    std::vector<FileStat> out;
    out.reserve(paths.size());
    for (auto& path : paths) {
      FileStat f;
      f.path = path;
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) {
        if (!missing(errno)) throw Error(errno_text(path, errno));
      } else {
        f.exists = true;
        f.is_file = S_ISREG(st.st_mode);
        f.size = uint64_t(st.st_size);
        f.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
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
      // Most paths asked are absent (a module's candidates across the site folders): one
      // stat says so, where realpath reads each component as a link first (37,000
      // readlink calls in one walk of Debian's torch, a tenth of its time).
      struct stat st;
      if (::stat(p.c_str(), &st) != 0 && missing(errno)) {
        out.push_back(std::nullopt);
        continue;
      }
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

  void write(const std::vector<WriteRequest>& files) override { write_local(files, tag_); }

  void remove(const std::vector<std::string>& paths) override {
    for (auto& p : paths) {
      if (auto why = util::unsafe_path(folder_of(p)))
        throw Error("refusing to remove " + p + ": " + *why + ", who could redirect it; nothing was removed");
    }
    for (auto& p : paths)
      if (::unlink(p.c_str()) != 0 && !missing(errno)) throw Error(errno_text(p, errno));
  }

  std::vector<CompileResult> compile(const std::vector<CompileRequest>& sources) override {
    if (sources.empty()) return {};
    if (!agent_) throw Error("internal: compile() before probe(): no Python to compile with");
    return agent_->compile(sources);
  }

  std::vector<bool> importable(const std::vector<std::string>& modules) override {
    if (modules.empty()) return {};
    if (!agent_) throw Error("internal: importable() before probe(): no Python to ask");
    return agent_->importable(modules);
  }

  std::unique_ptr<Lock> lock(const std::string& path, int timeout_ms, LockMode mode) override {
    return lock_local(path, timeout_ms, mode, tag_);
  }

  CommandResult run_command(const CommandRun& run) override { return run_local_command(run); }
  std::vector<CommandResult> run_commands(const std::vector<CommandRun>& runs, int jobs) override {
    return run_local_commands(runs, jobs);
  }

 private:
  std::unique_ptr<AgentClient> agent_;  // one Python process for the whole command
  std::string python_;
  const std::string tag_ = util::random_name(8);  // in every temp's name (Lock)
};

}  // namespace

std::unique_ptr<Host> make_local_host() { return std::make_unique<LocalHost>(); }

}  // namespace sitepatch::host

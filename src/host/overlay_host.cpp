#include "sitepatch/host/overlay.hpp"

#include "sitepatch/util/error.hpp"

namespace sitepatch::host {

namespace {

class OverlayHost : public Host {
 public:
  OverlayHost(Host& inner, std::map<std::string, std::string> texts) : inner_(inner), texts_(std::move(texts)) {}

  std::string name() const override { return inner_.name(); }
  bool local() const override { return inner_.local(); }
  site::Environment probe(const std::string& venv) override { return inner_.probe(venv); }

  std::vector<FileData> read(const std::vector<std::string>& paths) override {
    auto out = inner_.read(paths);
    for (auto& f : out)
      if (auto it = texts_.find(f.path); it != texts_.end() && f.exists && !f.is_dir) f.content = it->second;
    return out;
  }

  std::vector<FileData> read_lines(const std::vector<std::string>& paths,
                                   const std::vector<std::string>& needles) override {
    auto out = inner_.read_lines(paths, needles);
    for (auto& f : out)
      if (auto it = texts_.find(f.path); it != texts_.end() && f.exists && !f.is_dir)
        f.content = lines_holding(it->second, needles);
    return out;
  }

  std::vector<DirEntry> list(const std::string& dir) override { return inner_.list(dir); }
  std::vector<FileStat> stat(const std::vector<std::string>& paths) override {
    auto out = inner_.stat(paths);
    for (auto& f : out)
      if (auto it = texts_.find(f.path); it != texts_.end() && f.exists) f.size = it->second.size();
    return out;
  }
  std::vector<std::vector<DirEntry>> list_many(const std::vector<std::string>& dirs) override {
    return inner_.list_many(dirs);
  }
  std::vector<std::vector<EntryHit>> search(const std::vector<EntryQuery>& queries) override {
    return inner_.search(queries);
  }
  std::optional<std::map<std::string, std::string>> snapshot(const std::string& dir,
                                                             const std::vector<std::string>& skip,
                                                             const std::map<std::string, std::string>& have) override {
    return inner_.snapshot(dir, skip, have);
  }
  std::vector<std::optional<std::string>> realpath(const std::vector<std::string>& paths) override {
    return inner_.realpath(paths);
  }
  void write(const std::vector<WriteRequest>&) override { refuse(); }
  void remove(const std::vector<std::string>&) override { refuse(); }
  std::vector<CompileResult> compile(const std::vector<CompileRequest>& sources) override {
    return inner_.compile(sources);
  }
  std::vector<bool> importable(const std::vector<std::string>& modules) override {
    return inner_.importable(modules);
  }
  CommandResult run_command(const CommandRun& run) override { return inner_.run_command(run); }
  std::vector<CommandResult> run_commands(const std::vector<CommandRun>& runs, int jobs) override {
    return inner_.run_commands(runs, jobs);
  }
  std::unique_ptr<Lock> lock(const std::string& path, int timeout_ms, LockMode mode) override {
    return inner_.lock(path, timeout_ms, mode);
  }

 private:
  [[noreturn]] static void refuse() { throw Error("internal: a write through a read-only overlay of the host"); }
  Host& inner_;
  std::map<std::string, std::string> texts_;
};

}  // namespace

std::unique_ptr<Host> overlay_host(Host& inner, std::map<std::string, std::string> texts) {
  return std::make_unique<OverlayHost>(inner, std::move(texts));
}

}  // namespace sitepatch::host

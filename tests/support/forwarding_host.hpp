#pragma once
// A Host that hands every call to a real one: tests derive from it and override the
// one operation they break (a write that dies half-way, a connection cut).
#include <memory>

#include "sitepatch/host/host.hpp"

namespace testsupport {

class ForwardingHost : public sitepatch::host::Host {
 public:
  explicit ForwardingHost(std::unique_ptr<sitepatch::host::Host> real) : real_(std::move(real)) {}
  std::string name() const override { return real_->name(); }
  bool local() const override { return real_->local(); }
  sitepatch::site::Environment probe(const std::string& venv) override { return real_->probe(venv); }
  std::vector<sitepatch::host::FileData> read(const std::vector<std::string>& p) override {
    return real_->read(p);
  }
  std::vector<sitepatch::host::FileStat> stat(const std::vector<std::string>& p) override {
    return real_->stat(p);
  }
  std::vector<sitepatch::host::FileData> read_lines(const std::vector<std::string>& p,
                                                    const std::vector<std::string>& needles) override {
    return real_->read_lines(p, needles);
  }
  std::vector<sitepatch::host::DirEntry> list(const std::string& d) override { return real_->list(d); }
  std::vector<std::vector<sitepatch::host::DirEntry>> list_many(const std::vector<std::string>& d) override {
    return real_->list_many(d);
  }
  std::optional<std::map<std::string, std::string>> snapshot(
      const std::string& d, const std::vector<std::string>& skip,
      const std::map<std::string, std::string>& have) override {
    return real_->snapshot(d, skip, have);
  }
  std::vector<std::optional<std::string>> realpath(const std::vector<std::string>& p) override {
    return real_->realpath(p);
  }
  void write(const std::vector<sitepatch::host::WriteRequest>& files) override { real_->write(files); }
  void remove(const std::vector<std::string>& p) override { real_->remove(p); }
  std::vector<bool> importable(const std::vector<std::string>& m) override { return real_->importable(m); }
  std::vector<sitepatch::host::CompileResult> compile(
      const std::vector<sitepatch::host::CompileRequest>& s) override {
    return real_->compile(s);
  }
  std::unique_ptr<sitepatch::host::Lock> lock(const std::string& p, int timeout_ms,
                                              sitepatch::host::LockMode mode) override {
    return real_->lock(p, timeout_ms, mode);
  }
  void prefetch(const sitepatch::host::ReadAhead& what) override { real_->prefetch(what); }
  void confirm() override { real_->confirm(); }
  void finish() override { real_->finish(); }

 protected:
  sitepatch::host::Host& real() { return *real_; }

 private:
  std::unique_ptr<sitepatch::host::Host> real_;
};

}  // namespace testsupport

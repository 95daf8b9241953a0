#pragma once
// The environment's history as a repository this process can open with libgit2: the
// state folder itself on this machine; on another machine, a local copy fetched in one
// round trip, whose new files go back (objects first, then refs) after every commit.
#include <map>
#include <memory>
#include <string>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// The copy of a remote history for one command (fetched once, removed at the end).
struct Mirror {
  std::string dir;                            // local temp folder
  bool existed = false;                       // the remote had a history
  std::map<std::string, std::string> remote;  // rel -> bytes, as the remote has them
  ~Mirror();
};

class HistoryAccess {
 public:
  /// nullptr when there is no history and `create` is false.
  static std::unique_ptr<HistoryAccess> open(Session& s, bool create);

  std::vector<store::PatchRecord> patches() const { return h_->patches(); }
  std::optional<std::string> site_file(const std::string& rel) const { return h_->site_file(rel); }
  std::vector<store::LogEntry> log() const { return h_->log(); }
  /// Commits; on a remote environment the commit is there when this returns.
  std::string commit(const store::Transaction& tx);

 private:
  HistoryAccess(Session& s, std::unique_ptr<store::History> h) : s_(s), h_(std::move(h)) {}
  void publish();
  Session& s_;
  std::unique_ptr<store::History> h_;
};

}  // namespace sitepatch::engine::detail

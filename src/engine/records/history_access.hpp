#pragma once
// src/engine/records/: the history and every record kept true beside the patched files:
// the history as a repository (history_access), which environment it describes
// (binding.cpp), the histories of folders the environment shares (homes.cpp), an apply's
// PatchRecords (records), what became of a recorded file since (file_state), pip's
// RECORD rows and conda's hashes (record_sync.cpp, conda_meta.cpp), and the note beside
// the files that names their history (marker.cpp).
//
// The environment's history as a repository this process can open with libgit2: the
// state folder itself on this machine; on another machine, a local copy fetched in one
// round trip, whose new files go back (objects first, then refs) after every commit.
#include <map>
#include <memory>
#include <string>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// Checks that the history in s.state_dir describes s.env (see binding.cpp) and, for a
/// writer, records it; returns the prefix the history was recorded for.
std::string bind_history(Session& s, bool writer);
/// A record's site folder as the history keeps it (relative to the prefix) ...
std::string stored_site_dir(const Session& s, const std::string& site_dir);
/// ... and as this environment has it (absolute).
std::string live_site_dir(const Session& s, const std::string& stored, const std::string& recorded_prefix);

/// The copy of a remote history for one command (fetched once, removed at the end).
struct Mirror {
  std::string dir;                            // local temp folder
  bool existed = false;                       // the remote had a history
  std::map<std::string, std::string> remote;  // rel -> bytes, as the remote has them
  std::string cache;                          // this machine's copy kept between commands ("" none)
  std::map<std::string, std::string> cached;  // what that copy holds
  ~Mirror();
};

class HistoryAccess {
 public:
  /// nullptr when there is no history and `create` is false. A `writer` (holding the
  /// exclusive lock) records which environment the history describes.
  static std::unique_ptr<HistoryAccess> open(Session& s, bool create, bool writer = false);

  /// A remote history's files in each of `dirs` (absolute, inside s.state_dir), from the
  /// copy fetched now, under the caller's lock: what list_many would answer for its
  /// files, without a request of its own. A copy fetched before (under an earlier lock)
  /// is not believed: then it is list_many.
  static std::vector<std::vector<host::DirEntry>> listing(Session& s, const std::vector<std::string>& dirs);
  /// Files removed from a remote history (absolute): gone from the copy as well.
  static void forget(Session& s, const std::vector<std::string>& paths);

  /// Applied patches, each file's site folder absolute in this environment.
  std::vector<store::PatchRecord> patches() const;
  std::optional<std::string> site_file(const std::string& rel) const { return h_->site_file(rel); }
  std::optional<std::string> pristine_file(const std::string& path) const { return h_->pristine_file(path); }
  std::vector<std::string> site_file_versions(const std::string& rel) const { return h_->site_file_versions(rel); }
  std::vector<store::LogEntry> log() const { return h_->log(); }
  std::string diff_of(const std::string& oid) const { return h_->diff_of(oid); }
  /// Commits; on a remote environment the commit is there when this returns.
  std::string commit(const store::Transaction& tx);

 private:
  HistoryAccess(Session& s, std::unique_ptr<store::History> h) : s_(s), h_(std::move(h)) {}
  void publish();
  Session& s_;
  std::unique_ptr<store::History> h_;
  std::string recorded_prefix_;  // the prefix the history was made for
};

}  // namespace sitepatch::engine::detail

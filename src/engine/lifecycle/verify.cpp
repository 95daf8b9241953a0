// verify: each patched file against the history: applied, reverted, modified,
// replaced, missing.
#include <algorithm>
#include <map>

#include "engine/edits/locate.hpp"
#include "engine/internal.hpp"
#include "engine/records/file_state.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

int badness(FileState s) {
  switch (s) {
    case FileState::applied: return 0;
    case FileState::modified: return 1;
    case FileState::reverted: return 2;
    case FileState::replaced: return 3;
    case FileState::missing: return 4;
  }
  return 5;
}

}  // namespace

namespace detail {

std::vector<store::PatchRecord> select(const std::vector<store::PatchRecord>& all,
                                       const std::vector<std::string>& ids) {
  if (ids.empty()) return all;
  std::vector<store::PatchRecord> out;
  std::vector<std::string> known;
  for (auto& r : all) known.push_back(r.id);
  for (auto& id : ids) {
    auto it = std::find_if(all.begin(), all.end(), [&](auto& r) { return r.id == id; });
    if (it == all.end()) {
      std::string msg = "no applied patch `" + id + "`";
      auto near = util::nearest(id, known);
      if (!near.empty()) msg += "; did you mean " + util::join(near, ", ") + "?";
      msg += known.empty() ? " (nothing is applied)" : " (applied: " + util::join(known, ", ") + ")";
      throw Error(msg);
    }
    if (std::none_of(out.begin(), out.end(), [&](auto& r) { return r.id == id; }))
      out.push_back(*it);
  }
  return out;
}

}  // namespace detail

namespace {

/// One history this command reads, under its shared lock.
struct Opened {
  Session* s;
  std::unique_ptr<host::Lock> lock;
  std::unique_ptr<detail::HistoryAccess> history;
  std::vector<store::PatchRecord> all;
};

/// An apply of `r` that a killed sitepatch left unfinished, and what settles it.
void unfinished_of(Session& s, const store::PatchRecord& r, PatchStatus& ps) {
  if (r.state == "pending") {
    ps.unfinished = "writing";
    ps.unfinished_message = "the apply of " + r.id + " was interrupted while it wrote the files (their originals "
                            "are in the history): " + detail::fix_command(s, "reapply " + r.id) +
                            " finishes it, " + detail::fix_command(s, "rollback " + r.id) + " undoes it";
  } else if (r.state == "checking") {
    ps.unfinished = "checking";
    ps.unfinished_message = "the apply of " + r.id + " was stopped while its check ran, and the check never "
                            "passed: " + detail::fix_command(s, "rollback " + r.id) +
                            " undoes it (the next command that writes here does too); apply it again to check it";
  }
}

PatchStatus status_of(Session& s, const detail::HistoryAccess& history, const store::PatchRecord& r,
                      std::map<std::string, host::FileData>& now, std::map<std::string, int>& writers,
                      std::map<std::string, python::Module>& parsed) {
  PatchStatus ps;
  ps.id = r.id;
  ps.description = r.description;
  ps.applied_at = r.applied_at;
  ps.recipe_path = r.recipe_path;
  ps.recipe_hash = r.recipe_hash;
  ps.history = s.state_dir;
  ps.shared_by = s.shared_by;
  unfinished_of(s, r, ps);
  if (!r.files.empty()) ps.dist = detail::dist_label(r.files[0].dist, r.files[0].version);
  for (auto& f : r.files)
    if (std::string d = detail::dist_label(f.dist, f.version);
        !d.empty() && std::find(ps.dists.begin(), ps.dists.end(), d) == ps.dists.end())
      ps.dists.push_back(d);
  for (auto& f : r.files) {
    const auto& cur = now[f.site_dir + "/" + f.rel];
    FileStatus fs = detail::file_state(f, cur.exists, cur.content, history.site_file(f.rel), s.distributions());
    // A file exactly as this recipe's apply left it holds its every edit; with several
    // recipes on it, someone's changes, or a file as a later command left it (a rollback
    // of another recipe that ran after pip had dropped this one's edit), each edit is asked.
    bool as_its_apply_left = cur.content == f.after && writers[f.site_dir + "/" + f.rel] <= 1;
    if ((fs.state == FileState::applied && !as_its_apply_left) || fs.state == FileState::modified) {
      auto& module = parsed.try_emplace(f.site_dir + "/" + f.rel, cur.content).first->second;
      auto gone = detail::missing_edits(r, f.rel, module);
      if (!gone.empty()) {
        fs.state = FileState::replaced;
        // An upgrade that this recipe was not reapplied after (on-upgrade: warn, or a
        // reapply of only the other recipes) is the cause, not another recipe.
        auto up = detail::upgrade_of(f, s.distributions());
        fs.message = f.rel + ": the edit of " + util::join(gone, ", ") + " by " + r.id + " is no longer in it (" +
                     (up ? up->from_to + " replaced the file and " + r.id + " was not reapplied"
                         : std::string("another recipe or someone else replaced it")) +
                     "); " + (up ? "sitepatch status gives the command that puts it back"
                                 : "apply " + r.id + " again to put it back");
      }
    }
    if (badness(fs.state) > badness(ps.state)) ps.state = fs.state;
    ps.files.push_back(fs);
  }
  return ps;
}

}  // namespace

std::vector<PatchStatus> detail::statuses_of(Session& s, const HistoryAccess& history,
                                             const std::vector<store::PatchRecord>& all,
                                             const std::vector<store::PatchRecord>& records,
                                             std::map<std::string, host::FileData>& now) {
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> sources;
  for (auto& r : records)
    for (auto& f : r.files) {
      paths.push_back(f.site_dir + "/" + f.rel);
      sources.emplace_back(f.site_dir, f.rel);
    }
  // The compiled twins check_modules looks for come in the read's wait.
  s.host.prefetch({{}, {}, detail::twin_query(s, sources).paths});
  for (auto& f : s.host.read(paths)) now.emplace(f.path, std::move(f));
  std::map<std::string, python::Module> parsed;  // each file parsed once, for every record on it
  std::map<std::string, int> writers;             // records that patched each file
  for (auto& r : all)
    for (auto& f : r.files) ++writers[f.site_dir + "/" + f.rel];
  std::vector<PatchStatus> out;
  for (auto& r : records) out.push_back(status_of(s, history, r, now, writers, parsed));
  check_modules(s, records, out, now);
  return out;
}

namespace {

/// The records of one history against the files as they are now.
std::vector<PatchStatus> verify_in(Opened& o, const std::vector<std::string>& ids) {
  std::vector<store::PatchRecord> records;
  for (auto& r : o.all)
    if (ids.empty() || std::find(ids.begin(), ids.end(), r.id) != ids.end()) records.push_back(r);
  std::map<std::string, host::FileData> now;
  return detail::statuses_of(*o.s, *o.history, o.all, records, now);
}

}  // namespace

std::vector<PatchStatus> verify(Session& s, const std::vector<std::string>& ids) {
  // The environment's own history, then those of the folders it shares.
  auto homes = detail::shared_homes(s);
  std::vector<Opened> opened;
  std::vector<std::string> known;
  std::vector<store::PatchRecord> every;
  bool own_missing = false;
  auto open_one = [&](Session& h) {
    // A write under way would look like someone else's change: wait for it.
    Opened o{&h, detail::read_lock(h), detail::HistoryAccess::open(h, false), {}};
    if (!o.history) {
      own_missing = own_missing || &h == &s;
      return;
    }
    o.all = o.history->patches();
    every.insert(every.end(), o.all.begin(), o.all.end());
    known.push_back(h.state_dir);
    opened.push_back(std::move(o));
  };
  open_one(s);
  for (auto& h : homes) open_one(h);
  if (auto lost = detail::lost_history(s, known, own_missing)) throw Error(*lost, Exit::not_intact);
  detail::select(every, ids);  // an unknown id is an error naming what is applied
  std::vector<PatchStatus> out;
  for (auto& o : opened) {
    auto part = verify_in(o, ids);
    out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return out;
}

Advice advice_for(const PatchStatus& p) {
  bool reapply = false, review = false, gone = !p.files.empty();
  for (auto& f : p.files) {
    gone = gone && f.uninstalled;
    if (f.state == FileState::modified) review = true;
    else if (f.state != FileState::applied && !f.uninstalled) reapply = true;
  }
  if (gone) return Advice::drop;
  if (reapply) return Advice::reapply;
  return review ? Advice::review : Advice::none;
}

}  // namespace sitepatch::engine

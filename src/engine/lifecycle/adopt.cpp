// adopt: someone changed a patched file around sitepatch's edits (a hotfix, a local
// tweak), and status says "changed by others" until the history agrees. Adopting
// records the files as they are now as the patch's applied state: its record's
// `after` and site/<rel> become today's bytes, so verify is green and a rollback still
// restores pip's originals (`before` is untouched). pip's RECORD rows follow the bytes.
#include <algorithm>
#include <map>
#include <optional>

#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

// Why `ps` cannot be adopted, or "" when it can: every file there, every edit in it,
// the owner at the version the patch was made for.
std::string refusal(Session& s, const store::PatchRecord& r, const PatchStatus& ps) {
  if (r.state == "pending")
    return "an apply of " + r.id + " was interrupted: finish it with " +
           detail::fix_command(s, "apply " + util::shell_word(r.recipe_path)) + " or undo it with " +
           detail::fix_command(s, "rollback " + r.id);
  if (r.state == "checking")
    return "the check after the apply of " + r.id + " never passed: " + detail::fix_command(s, "rollback " + r.id) +
           " undoes it";
  for (auto& f : ps.files)
    if (f.state == FileState::missing && f.upgrade.empty()) return f.message + ": there is nothing to adopt";
  switch (advice_for(ps)) {
    case Advice::drop:
      return ps.files.front().upgrade + ": " + detail::fix_command(s, "rollback " + r.id) + " forgets the record";
    case Advice::reapply: {
      std::vector<std::string> why;
      for (auto& f : ps.files)
        if (f.state != FileState::applied && f.state != FileState::modified) why.push_back(f.message);
      return util::join(why, "; ") + ". It needs reapplying, not adopting: run " + detail::fix_command(s, "reapply " + r.id);
    }
    case Advice::review:
    case Advice::none: break;
  }
  return "";
}

AdoptResult adopt_in(Session& s, const std::string& id, bool dry_run) {
  AdoptResult res;
  res.id = id;
  std::unique_ptr<host::Lock> lock =
      dry_run ? detail::read_lock(s) : s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  if (!dry_run) res.notes = detail::clean_history_locks(s);
  auto history = detail::HistoryAccess::open(s, false, !dry_run);
  if (!history) {
    if (auto lost = detail::lost_history(s, {}, true)) throw Error("cannot adopt: " + *lost);
    throw Error("nothing was ever applied to " + s.env.prefix + " (no history at " + s.state_dir + ")");
  }
  auto records = history->patches();
  if (!dry_run) {
    auto cleaned = detail::clean_temps(s, records, *lock);
    res.notes.insert(res.notes.end(), cleaned.begin(), cleaned.end());
  }
  store::PatchRecord r = detail::select(records, {id}).front();

  std::map<std::string, host::FileData> now;
  PatchStatus ps = detail::statuses_of(s, *history, records, {r}, now).front();
  if (auto why = refusal(s, r, ps); !why.empty()) throw Error("cannot adopt " + id + ": " + why + "; nothing was written");

  store::Transaction tx;
  tx.message = "adopt " + id + ": its files as they are now";
  tx.trailers.emplace_back("Sitepatch-Adopt", id);
  for (size_t i = 0; i < r.files.size(); ++i) {
    if (ps.files[i].state != FileState::modified) continue;
    auto& f = r.files[i];
    const std::string path = f.site_dir + "/" + f.rel;
    const std::string& text = now.at(path).content;
    FileChange fc;
    fc.rel = f.rel;
    fc.site_dir = f.site_dir;
    fc.path = path;
    fc.old_text = history->site_file(f.rel).value_or(f.after);
    fc.new_text = text;
    fc.old_sha = util::sha256_hex(text);
    fc.dist = f.dist;
    fc.version = f.version;
    fc.diff = store::unified_diff(fc.old_text, fc.new_text, f.rel);
    res.files.push_back(std::move(fc));
    f.after = text;
    for (auto& e : r.edits)
      if (e.rel == f.rel) e.after_sha = util::sha256_hex(text);
    tx.site[f.rel] = text;
  }
  if (res.files.empty() || dry_run) return res;
  tx.put.push_back(r);

  // pip's rows first: they describe the bytes on disk whatever the history says, so
  // a failed commit below leaves them true.
  auto rows = detail::record_updates(s, res.files);
  auto hashes = detail::conda_updates(s, res.files);  // conda's records, likewise
  rows.insert(rows.end(), hashes.begin(), hashes.end());
  if (!rows.empty()) s.host.write(rows);
  try {
    res.commit = history->commit(tx);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\npip's RECORD rows of " + id +
                    "'s files match them now, but the history could not record the adoption; run it again (" +
                    detail::fix_command(s, "adopt " + id) + ")",
                Exit::partial);
  }
  res.written = true;
  return res;
}

}  // namespace

AdoptResult adopt(Session& s, const std::string& id, bool dry_run) {
  if (detail::shared_homes(s).empty()) return adopt_in(s, id, dry_run);
  // The patch is adopted in the history that keeps it.
  std::optional<Session> where;
  std::vector<store::PatchRecord> every;
  detail::each_history(s, [&](Session& w, detail::HistoryAccess& h) {
    for (auto& r : h.patches()) {
      every.push_back(r);
      if (r.id == id && !where) where.emplace(w);
    }
  });
  if (!where) detail::select(every, {id});  // throws, naming what is applied
  return adopt_in(where ? *where : s, id, dry_run);
}

}  // namespace sitepatch::engine

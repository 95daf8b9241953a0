// rollback: originals back, or, where another recipe's edit shares the file, only
// this recipe's hunks undone by a three-way merge. Nothing is written on conflict.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "engine/internal.hpp"
#include "engine/records/file_state.hpp"
#include "engine/records/history_access.hpp"
#include "engine/records/records.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/interrupt.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

// Undoes `f`'s edit in `text`; nullopt when it cannot be done cleanly.
std::optional<std::string> undo(const store::FileRecord& f, const std::string& text) {
  if (text == f.after) return f.before;
  if (text == f.before) return text;
  auto m = detail::undo_edit(f.after, text, f.before, f.rel);
  if (!m.clean) return std::nullopt;
  return m.content;
}

/// An apply an earlier command could not finish: finished now when it can be; when it
/// cannot and this rollback undoes it anyway, its pending records are rolled back as
/// they stand (files already written go back, the others are left as they are).
void finish_or_undo(Session& s, detail::HistoryAccess& history, const std::vector<store::PatchRecord>& chosen,
                    std::vector<std::string>& notes) {
  try {
    auto done = detail::recover(s, history);
    notes.insert(notes.end(), done.begin(), done.end());
  } catch (const Error& e) {
    std::vector<std::string> pending;
    for (auto& r : history.patches())
      if (r.state == "pending") pending.push_back(r.id);
    for (auto& id : pending)
      if (std::none_of(chosen.begin(), chosen.end(), [&](auto& c) { return c.id == id; }))
        throw Error(std::string(e.what()) + "\nroll it back first: " + detail::fix_command(s, "rollback " + id));
    notes.push_back("could not finish the interrupted apply of " + util::join(pending, ", ") + " (" + e.what() +
                    "); rolling it back as it stands");
  }
}

}  // namespace

namespace {

/// The text of every file of `chosen` once their edits are undone (newest first), and
/// the records of the patches that stay, updated where they share a file.
struct Undone {
  std::map<std::string, host::FileData> found;              // path -> the file now
  std::map<std::string, std::string> text;                  // path -> text after the undos
  std::map<std::string, const store::FileRecord*> rec_of;   // path -> the record undone
  std::vector<store::PatchRecord> kept;                     // other patches
  std::vector<bool> kept_changed;
};

// The merge's conflicting regions alone (a few lines around each), not the whole file.
std::string conflict_regions(const std::string& merged) {
  auto lines = util::split(merged, '\n');
  std::vector<bool> shown(lines.size(), false);
  constexpr size_t kAround = 2, kMax = 40;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (!util::starts_with(lines[k], "<<<<<<< ")) continue;
    size_t end = k;
    while (end < lines.size() && !util::starts_with(lines[end], ">>>>>>> ")) ++end;
    for (size_t j = k >= kAround ? k - kAround : 0; j <= end + kAround && j < lines.size(); ++j) shown[j] = true;
    k = end;
  }
  std::string out;
  size_t count = 0;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (!shown[k]) continue;
    if (k > 0 && !shown[k - 1] && !out.empty()) out += "    ...\n";
    if (++count > kMax) {
      out += "    ...\n";
      break;
    }
    out += "    " + lines[k] + "\n";
  }
  return out;
}

// Why `r`'s edit of `f` cannot be undone in `now`. When a patch applied after it changed
// lines next to it, the other patch and the order that works; else the conflicting lines.
std::string conflict_message(Session& s, const store::PatchRecord& r, const store::FileRecord& f,
                             const std::string& now, const Undone& u) {
  std::vector<std::pair<int64_t, std::string>> after_it;  // applied after r, with when
  for (auto& k : u.kept)
    for (auto& kf : k.files)
      if (kf.rel == f.rel && kf.site_dir == f.site_dir && kf.before != f.before &&
          (kf.before == f.after || k.applied_at >= r.applied_at))
        after_it.emplace_back(k.applied_at, k.id);
  std::stable_sort(after_it.begin(), after_it.end());
  std::vector<std::string> later;
  for (auto& [_, id] : after_it) later.push_back(id);
  auto m = store::merge3(f.after, now, f.before, f.rel);
  std::string regions = conflict_regions(m.content);
  if (!later.empty()) {
    std::vector<std::string> order = later;
    std::reverse(order.begin(), order.end());
    order.push_back(r.id);
    return r.id + ": cannot undo its edit of " + f.rel + " apart from " + util::join(later, ", ") +
           ", applied after it, which changed lines next to it; roll them back together, newest first: " +
           detail::fix_command(s, "rollback " + util::join(order, " ")) + "\n  where they meet (ours: now; theirs: "
           "without " + r.id + "):\n" + regions;
  }
  return r.id + ": cannot undo its edit of " + f.rel + " cleanly: the file changed around it since " + r.id +
         " was applied (ours: now; theirs: without " + r.id + "):\n" + regions +
         "  to roll it back anyway, losing that change: " + detail::fix_command(s, "adopt " + r.id) +
         ", then the rollback again";
}

// Whether none of `k`'s edits of `rel` is in `text`: an upgrade or reinstall dropped them
// and k was not reapplied. Its record then describes another file than this one, and
// neither it nor the imports it asked for follow this file's undo (a rollback once put
// back such a patch's `import functools` into pip's bytes, where nothing removed it).
bool dropped_from(const store::PatchRecord& k, const std::string& rel, const std::string& text) {
  size_t recorded = std::count_if(k.edits.begin(), k.edits.end(), [&](auto& e) { return e.rel == rel; });
  if (recorded == 0) return false;
  try {
    return detail::missing_edits(k, rel, python::Module(text, rel)).size() == recorded;
  } catch (const Error&) {
    return false;  // unparsable: the merge's own checks stand
  }
}

void undo_file(Session& s, const store::PatchRecord& r, const store::FileRecord& f, Undone& u,
               std::vector<std::string>& conflicts, std::vector<std::string>& notes) {
  std::string path = f.site_dir + "/" + f.rel;
  u.rec_of[path] = &f;
  auto it = u.text.find(path);
  if (it == u.text.end()) {
    notes.push_back(f.rel + " no longer exists; nothing to undo for " + r.id);
    return;
  }
  if (auto up = detail::upgrade_of(f, s.distributions()); up && it->second != f.after) {
    // A newer (or older) version's file: our bytes must not go over it.
    notes.push_back(up->replaced(f.rel) + "; nothing needed undoing for " + r.id);
    return;
  }
  if (it->second == f.before) {
    notes.push_back(f.rel + " is already back to its original");
    return;
  }
  auto back = undo(f, it->second);
  if (!back) {
    conflicts.push_back(conflict_message(s, r, f, it->second, u));
    return;
  }
  std::string was = std::exchange(it->second, *back);
  // Patches that stay keep records that no longer contain this one's edit, but do
  // contain the imports they asked for (this one may have added one they found there).
  for (size_t k = 0; k < u.kept.size(); ++k) {
    auto same_file = [&](const store::FileRecord& kf) { return kf.rel == f.rel && kf.site_dir == f.site_dir; };
    auto& files = u.kept[k].files;
    if (std::none_of(files.begin(), files.end(), same_file) || dropped_from(u.kept[k], f.rel, was)) continue;
    for (auto& kf : files)
      if (same_file(kf)) {
        if (auto b = undo(f, kf.before)) kf.before = *b;
        if (auto a = undo(f, kf.after)) kf.after = detail::ensure_kept_imports(u.kept[k], f.rel, *a);
        it->second = detail::ensure_kept_imports(u.kept[k], f.rel, it->second);
        u.kept_changed[k] = true;
      }
  }
}

Undone undo_all(Session& s, const std::vector<store::PatchRecord>& records,
                const std::vector<store::PatchRecord>& chosen, std::vector<std::string>& notes) {
  Undone u;
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> files;
  for (auto& r : chosen)
    for (auto& f : r.files) {
      paths.push_back(f.site_dir + "/" + f.rel);
      files.emplace_back(f.site_dir, f.rel);
    }
  s.distributions().prefetch(files);  // each file's owner (upgrade_of) in one round trip
  for (auto& f : s.host.read(paths)) u.found.emplace(f.path, std::move(f));
  for (auto& [p, f] : u.found)
    if (f.exists) u.text[p] = f.content;
  for (auto& r : records)
    if (std::none_of(chosen.begin(), chosen.end(), [&](auto& c) { return c.id == r.id; })) u.kept.push_back(r);
  u.kept_changed.assign(u.kept.size(), false);
  std::vector<std::string> conflicts;
  for (auto& r : chosen)
    for (auto& f : r.files) undo_file(s, r, f, u, conflicts, notes);
  if (!conflicts.empty()) throw Error(util::join(conflicts, "\n") + "\nnothing was written");
  return u;
}

// Names a patch that stays still uses and whose binding (an ensure-import another
// recipe added, and this one found already there) the rollback would take out of the
// file: the module would raise NameError. Refused, naming who needs it and the way out.
void refuse_lost_bindings(Session& s, const Undone& u, const std::vector<store::PatchRecord>& chosen) {
  std::vector<std::string> problems;
  for (auto& [path, t] : u.text) {
    auto rec = u.rec_of.find(path);
    auto found = u.found.find(path);
    if (rec == u.rec_of.end() || found == u.found.end() || t == found->second.content) continue;
    std::vector<std::string> users;
    for (auto& k : u.kept)
      for (auto& kf : k.files)
        if (kf.rel == rec->second->rel && kf.site_dir == rec->second->site_dir) users.push_back(k.id);
    if (users.empty()) continue;  // nothing of ours stays in the file: pip's names are pip's
    auto free_in = [&](const std::string& text) {
      std::set<std::string> names;
      python::Module m(text, rec->second->rel);
      if (auto fn = m.free_names({{0, m.source().size()}}, {}))
        for (auto& n : *fn) names.insert(n.name);
      return names;
    };
    std::set<std::string> before = free_in(found->second.content), lost;
    for (auto& n : free_in(t))
      if (!before.count(n)) lost.insert(n);
    if (lost.empty()) continue;
    std::vector<std::string> ids;
    for (auto& r : chosen) ids.push_back(r.id);
    std::vector<std::string> together = ids;
    together.insert(together.end(), users.begin(), users.end());
    problems.push_back("rolling back " + util::join(ids, ", ") + " would take what binds " +
                       util::join(std::vector<std::string>(lost.begin(), lost.end()), ", ") + " out of " +
                       rec->second->rel + ", which " + util::join(users, ", ") +
                       " (still applied) uses there: the module would raise NameError; roll them back together (" +
                       detail::fix_command(s, "rollback " + util::join(together, " ")) + "), then apply " +
                       util::join(users, ", ") + " again if it should stay");
  }
  if (!problems.empty()) throw Error(util::join(problems, "\n") + "\nnothing was written");
}

// The file at `path` as the rollback leaves it (`t`), named by the record undone there.
FileChange change_at(const Undone& u, const std::string& path, const std::string& t) {
  FileChange fc;
  fc.path = path;
  fc.rel = u.rec_of.at(path)->rel;
  fc.site_dir = u.rec_of.at(path)->site_dir;
  fc.new_text = t;
  return fc;
}

std::vector<FileChange> changes_of(Undone& u) {
  std::vector<FileChange> out;
  for (auto& [path, t] : u.text) {
    const auto& orig = u.found[path];
    if (t == orig.content || !u.rec_of.count(path)) continue;
    FileChange fc = change_at(u, path, t);
    fc.old_text = orig.content;
    fc.old_sha = util::sha256_hex(orig.content);
    fc.diff = store::unified_diff(fc.old_text, fc.new_text, fc.rel);
    out.push_back(std::move(fc));
  }
  return out;
}

/// The originals back (all or nothing), with the notes beside the files as they must be
/// once the chosen patches are gone.
void write_back(Session& s, RollbackResult& res, const Undone& u, const std::string& again) {
  std::vector<host::WriteRequest> writes;
  std::vector<std::string> written;
  for (auto& fc : res.files) {
    writes.push_back({fc.path, fc.new_text, fc.old_sha, fc.site_dir});
    written.push_back(fc.path);
  }
  // pip's own rows, from pip's own bytes; for a file already as the rollback leaves it
  // too (a rollback killed after its files and before RECORD): the row follows the bytes.
  std::vector<FileChange> rows = res.files;
  for (auto& [path, t] : u.text)
    if (u.rec_of.count(path) && u.found.at(path).content == t) rows.push_back(change_at(u, path, t));
  auto stale_notes = detail::add_sidecars(s, rows, u.kept, writes);
  try {
    s.host.write(writes);
  } catch (const host::PartialWriteError& e) {
    throw Error(std::string(e.what()) + "\nthe rollback of " + util::join(res.ids, ", ") +
                    " stopped half-way; the history still has every original: run it again (" + again + ")",
                Exit::partial);
  }
  if (!stale_notes.empty()) s.host.remove(stale_notes);
  res.pyc_removed = detail::remove_bytecode(s.host, written);
}

store::Transaction rollback_commit(const RollbackResult& res, const Undone& u,
                                   const std::vector<store::PatchRecord>& records,
                                   const std::vector<store::PatchRecord>& chosen) {
  store::Transaction tx;
  tx.message = "rollback " + util::join(res.ids, ", ");
  for (auto& r : chosen) {
    tx.drop.push_back(r.id);
    tx.trailers.emplace_back("Sitepatch-Rollback", r.id);
    tx.trailers.emplace_back("Sitepatch-Recipe-Hash", r.recipe_hash);
  }
  for (size_t k = 0; k < u.kept.size(); ++k)
    if (u.kept_changed[k]) tx.put.push_back(u.kept[k]);
  for (auto& fc : res.files) tx.site[fc.rel] = fc.new_text;
  // A file no patch refers to any more leaves site/ (the tree then shows only what
  // sitepatch still owns).
  tx.site_drop = detail::unreferenced(records, tx.put, tx.drop);
  for (auto& rel : tx.site_drop) tx.site.erase(rel);
  return tx;
}

}  // namespace

namespace {

/// Said once the records are known, so that a remote host's answers come in the waits
/// the rollback has anyway (the owners' search, the installed versions'): the files to
/// undo, the folders the cleaning and the bytecode removal list, pip's RECORDs and the
/// notes. A superset of what the rollback reads: what it does not read costs bytes only.
void read_ahead_of_undo(Session& s, const std::vector<store::PatchRecord>& records,
                        const std::vector<store::PatchRecord>& chosen) {
  std::vector<std::string> paths;
  std::vector<FileChange> changes;
  for (auto& r : chosen)
    for (auto& f : r.files) {
      paths.push_back(f.site_dir + "/" + f.rel);
      FileChange fc;
      fc.path = paths.back();
      fc.site_dir = f.site_dir;
      fc.rel = f.rel;
      changes.push_back(std::move(fc));
    }
  s.host.prefetch({paths, detail::bytecode_dirs(paths), {}});
  auto dirs = detail::temp_folders(s, records);  // waits for the owners, and for the above
  auto sidecars = detail::record_paths(s, changes);
  auto notes = detail::marker_paths(s, records);
  sidecars.insert(sidecars.end(), notes.begin(), notes.end());
  sidecars.push_back(detail::conda_meta_dir(s));  // add_sidecars asks whether it is there
  s.host.prefetch({sidecars, dirs, {}});
}

// Whether `a` was applied on top of `b`: a file of `a` started from the text `b` left.
bool builds_on(const store::PatchRecord& a, const store::PatchRecord& b) {
  for (auto& fa : a.files)
    for (auto& fb : b.files)
      if (fa.rel == fb.rel && fa.site_dir == fb.site_dir && fa.before == fb.after) return true;
  return false;
}

// By apply time (seconds), newest first; within one second, a patch before the one it
// was applied on top of (two applies in a second, or two recipes of one apply).
void newest_first(std::vector<store::PatchRecord>& chosen) {
  std::stable_sort(chosen.begin(), chosen.end(), [](auto& a, auto& b) { return a.applied_at > b.applied_at; });
  size_t moves = chosen.size() * chosen.size();  // a bound, should two records claim each other
  for (size_t i = 0; i < chosen.size(); ++i)
    for (size_t j = i + 1; j < chosen.size() && chosen[j].applied_at == chosen[i].applied_at; ++j)
      if (moves > 0 && builds_on(chosen[j], chosen[i])) {
        --moves;
        std::rotate(chosen.begin() + long(i), chosen.begin() + long(j), chosen.begin() + long(j) + 1);
        j = i;  // look again from the one moved up
      }
}

/// Rollback within one history (the environment's own, or a shared folder's).
RollbackResult rollback_in(Session& s, const std::vector<std::string>& ids, bool all, bool dry_run,
                           host::Lock* held = nullptr) {
  RollbackResult res;
  std::unique_ptr<host::Lock> taken;
  if (!held) taken = dry_run ? detail::read_lock(s) : s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  host::Lock* lock = held ? held : taken.get();
  if (!dry_run) res.notes = detail::clean_history_locks(s);
  auto history = detail::HistoryAccess::open(s, false, !dry_run);
  if (!history) {
    if (auto lost = detail::lost_history(s, {}, true)) throw Error("cannot roll back: " + *lost);
    if (all || s.missing_ok) return res;
    throw Error("nothing was ever applied to " + s.env.prefix + " (no history at " + s.state_dir + ")");
  }
  auto records = history->patches();
  std::vector<std::string> wanted = ids;
  // An apply whose check never passed goes too, whatever was named: no writer keeps it.
  std::vector<std::string> unchecked;
  if (!dry_run && !all)
    for (auto& id : detail::unchecked_ids(records))
      if (std::find(wanted.begin(), wanted.end(), id) == wanted.end()) unchecked.push_back(id);
  wanted.insert(wanted.end(), unchecked.begin(), unchecked.end());
  if (!unchecked.empty())
    res.notes.push_back("rolling back " + util::join(unchecked, ", ") + " too: the check after its apply never "
                        "passed (the sitepatch that ran it was stopped)");
  if (s.missing_ok && !all) {
    // Rolling back what is not applied is done already: a fleet's second run changes nothing.
    wanted.erase(std::remove_if(wanted.begin(), wanted.end(),
                                [&](auto& id) {
                                  return std::none_of(records.begin(), records.end(),
                                                      [&](auto& r) { return r.id == id; });
                                }),
                 wanted.end());
    if (wanted.empty()) return res;
  }
  auto chosen = detail::select(records, all ? std::vector<std::string>{} : wanted);
  if (!dry_run) {
    read_ahead_of_undo(s, records, chosen);
    auto cleaned = detail::clean_temps(s, records, *lock);
    res.notes.insert(res.notes.end(), cleaned.begin(), cleaned.end());
    if (detail::any_pending(records)) {
      finish_or_undo(s, *history, chosen, res.notes);
      records = history->patches();
      chosen = detail::select(records, all ? std::vector<std::string>{} : wanted);
    }
  }
  // Newest first, so each undo meets the text its own apply left.
  newest_first(chosen);
  for (auto& r : chosen) res.ids.push_back(r.id);
  // --all with nothing applied: nothing changes, so nothing is recorded (each run made an
  // empty commit before).
  if (chosen.empty()) return res;

  Undone u = undo_all(s, records, chosen, res.notes);
  refuse_lost_bindings(s, u, chosen);
  res.files = changes_of(u);
  if (dry_run) return res;

  std::string again = detail::fix_command(s, all ? "rollback --all" : "rollback " + util::join(res.ids, " "));
  util::InterruptGuard whole_write;  // a signal waits for the files and their commit
  write_back(s, res, u, again);
  try {
    res.commit = history->commit(rollback_commit(res, u, records, chosen));
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\nthe files of " + util::join(res.ids, ", ") +
                    " are back to their originals, but the history could not record it; run the "
                    "rollback again to record it (" + again + ")",
                Exit::partial);
  }
  res.written = true;
  return res;
}

void add(RollbackResult& to, RollbackResult&& part) {
  to.ids.insert(to.ids.end(), part.ids.begin(), part.ids.end());
  to.files.insert(to.files.end(), std::make_move_iterator(part.files.begin()),
                  std::make_move_iterator(part.files.end()));
  to.notes.insert(to.notes.end(), part.notes.begin(), part.notes.end());
  to.pyc_removed.insert(to.pyc_removed.end(), part.pyc_removed.begin(), part.pyc_removed.end());
  to.written = to.written || part.written;
  if (!part.commit.empty()) to.commit = part.commit;
}

}  // namespace

RollbackResult detail::rollback_locked(Session& s, host::Lock& lock, const std::vector<std::string>& ids) {
  return rollback_in(s, ids, false, false, &lock);
}

RollbackResult rollback(Session& s, const std::vector<std::string>& ids, bool all, bool dry_run) {
  if (!all && ids.empty()) throw Error("rollback: name the patches to roll back, or --all", Exit::usage);
  if (detail::shared_homes(s).empty()) return rollback_in(s, ids, all, dry_run);
  // Which history holds which patch: each rollback is all or nothing in its own.
  std::vector<std::pair<Session, std::vector<std::string>>> held;
  std::vector<store::PatchRecord> every;
  auto known = detail::each_history(s, [&](Session& w, detail::HistoryAccess& h) {
    std::vector<std::string> mine;
    for (auto& r : h.patches()) {
      every.push_back(r);
      if (all || std::find(ids.begin(), ids.end(), r.id) != ids.end()) mine.push_back(r.id);
    }
    if (!mine.empty()) held.emplace_back(w, std::move(mine));
  });
  bool own_missing = known.empty() || known.front() != s.state_dir;
  if (auto lost = detail::lost_history(s, known, own_missing)) throw Error("cannot roll back: " + *lost);
  if (!all && !s.missing_ok) detail::select(every, ids);  // an unknown id is an error naming what is applied
  RollbackResult res;
  for (auto& [w, mine] : held) add(res, rollback_in(w, mine, false, dry_run));
  return res;
}

}  // namespace sitepatch::engine

// src/engine/lifecycle/: a patch's life in one environment, a file per command: plan,
// apply, verify, rollback, reapply, adopt, log and show (history_view.cpp); and what
// those commands share: what an interrupted one left cleaned (leftovers.cpp), two
// recipes on one target refused (overlap.cpp), where a planned file lives and who else
// sees it (placement.cpp, editable.cpp). The history they read and write is records/'s;
// the checks of an edit's code are edits/'s.
//
// apply: plan, then save the originals in the history before the first byte of a
// package file changes, write every file (compare-and-swap), clear bytecode, commit.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <optional>

#include <spdlog/spdlog.h>

#include "engine/edits/locate.hpp"
#include "engine/edits/unbound.hpp"
#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "engine/records/records.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/interrupt.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

/// The records as they were before `saved` replaced them.
store::Transaction undo_of(const store::Transaction& saved, const std::vector<store::PatchRecord>& existing,
                           const std::string& ids) {
  store::Transaction undo;
  undo.message = "abort apply " + ids + ": nothing was written";
  for (auto& rec : saved.put) {
    bool had = false;
    for (auto& old : existing)
      if (old.id == rec.id) {
        undo.put.push_back(old);
        had = true;
      }
    if (!had) undo.drop.push_back(rec.id);
  }
  return undo;
}

/// Which planned files carry the new bytes now, after a write failed: the host
/// promises none, but a connection that died mid-write cannot promise anything.
/// nullopt when the files cannot even be read.
std::optional<std::vector<bool>> written_now(Session& s, const Plan& plan) {
  std::vector<std::string> paths;
  for (auto& fc : plan.files) paths.push_back(fc.path);
  try {
    auto now = s.host.read(paths);
    std::vector<bool> out;
    for (size_t i = 0; i < now.size(); ++i)
      out.push_back(now[i].exists && now[i].content == plan.files[i].new_text &&
                    plan.files[i].new_text != plan.files[i].old_text);
    return out;
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// The message for a write that stopped half-way: each file's state and the one
/// command that fixes it. The records stay pending, so that command can.
std::string half_written(Session& s, const Plan& plan, const std::string& why,
                         const std::optional<std::vector<bool>>& written, const std::string& ids) {
  std::string msg = why + "\nthe apply of " + ids + " stopped half-way";
  if (!written) {
    msg += "; its files could not be checked";
  } else {
    msg += ":";
    for (size_t i = 0; i < plan.files.size(); ++i)
      msg += "\n  " + plan.files[i].rel + ": " + ((*written)[i] ? "patched" : "as it was");
  }
  msg += "\nthe originals are in the history: " + detail::fix_command(s, "rollback " + ids) +
         " puts them back (the next apply finishes it instead)";
  return msg;
}

/// The applied patches once `tx` is committed over `existing`.
std::vector<store::PatchRecord> after_commit(const std::vector<store::PatchRecord>& existing,
                                            const store::Transaction& tx) {
  std::vector<store::PatchRecord> out;
  auto named = [](const std::vector<store::PatchRecord>& rs, const std::string& id) {
    return std::any_of(rs.begin(), rs.end(), [&](auto& r) { return r.id == id; });
  };
  for (auto& r : existing)
    if (!named(tx.put, r.id) && std::find(tx.drop.begin(), tx.drop.end(), r.id) == tx.drop.end())
      out.push_back(r);
  out.insert(out.end(), tx.put.begin(), tx.put.end());
  return out;
}

/// Said right after the lock, so a remote host's answers share the history's wait: the
/// files the plan locates its edits in (and their real paths), and the folders the
/// cleaning lists. Every edit of every recipe; the plan skips the ones already applied,
/// and what it does not read costs bytes, not a wait.
void read_ahead_of_plan(Session& s, const std::vector<recipe::Recipe>& recipes) {
  std::vector<const recipe::Edit*> edits;
  for (auto& r : recipes)
    for (auto& e : r.edits) edits.push_back(&e);
  // locate's realpath: the files it finds among the candidates, and the site folders
  auto candidates = detail::candidate_paths(s, edits);
  auto real = candidates;
  real.insert(real.end(), s.env.site_dirs.begin(), s.env.site_dirs.end());
  auto twins = detail::candidate_twin_paths(s, edits);  // and the compiled twins it looks for
  real.insert(real.end(), twins.begin(), twins.end());
  s.host.prefetch({candidates, detail::own_site_dirs(s), real});
}

/// Said before the originals are committed, so their wait also brings what the write
/// and the bytecode removal read next: pip's RECORDs, the notes, the __pycache__ folders.
/// None of them is in the history, whose write would make them stale.
void read_ahead_of_write(Session& s, const std::vector<FileChange>& files,
                         const std::vector<store::PatchRecord>& after, const std::vector<std::string>& written) {
  auto paths = detail::record_paths(s, files);
  auto notes = detail::marker_paths(s, after);
  paths.insert(paths.end(), notes.begin(), notes.end());
  paths.push_back(detail::conda_meta_dir(s));  // add_sidecars asks whether it is there
  s.host.prefetch({paths, detail::bytecode_dirs(written), {}});
}

/// The pending commit's records, now applied, with the files as written: the apply's
/// own commit. Its failure leaves every file written: exit 4, and the next writer records it.
std::string commit_applied(Session& s, detail::HistoryAccess& history, const store::Transaction& saved,
                           const Plan& plan, const std::string& state) {
  store::Transaction done;
  done.put = saved.put;
  for (auto& r : done.put) r.state = state;
  std::string ids = detail::ids_of(saved.put);
  done.message = std::string(s.reapply ? "reapply " : "apply ") + ids + (state == "checking" ? ": written, checking" : "");
  done.trailers = saved.trailers;
  done.drop = saved.drop;
  done.site_drop = saved.site_drop;
  for (auto& fc : plan.files) done.site[fc.rel] = fc.new_text;
  try {
    return history.commit(done);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\nevery file of " + ids +
                    " was written, but the history could not record it; the next sitepatch command "
                    "that writes on this environment records it (" + detail::fix_command(s, "verify") + " shows the files)",
                Exit::partial);
  }
}

/// Under the writer's lock: the history opened after what a killed command left is
/// cleaned up and an unfinished apply finished; `existing` gets the records.
std::unique_ptr<detail::HistoryAccess> open_cleaned_history(Session& s, host::Lock& lock,
                                                    std::vector<store::PatchRecord>& existing,
                                                    std::vector<std::string>& notes,
                                                    std::vector<std::string>* recovered = nullptr) {
  notes = detail::clean_history_locks(s);
  auto history = detail::HistoryAccess::open(s, false, true);
  if (!history) return history;
  existing = history->patches();
  auto cleaned = detail::clean_temps(s, existing, lock);
  notes.insert(notes.end(), cleaned.begin(), cleaned.end());
  if (detail::any_pending(existing)) {
    auto finished = detail::recover(s, *history, recovered);
    notes.insert(notes.end(), finished.begin(), finished.end());
    existing = history->patches();
  }
  if (detail::undo_unchecked(s, lock, existing, notes)) {
    history = detail::HistoryAccess::open(s, false, true);  // the rollback moved it on
    existing = history ? history->patches() : std::vector<store::PatchRecord>{};
  }
  return history;
}

}  // namespace

namespace detail {

std::string forget_records(Session& s, detail::HistoryAccess& history, const std::vector<store::PatchRecord>& existing,
                   const std::vector<std::string>& ids) {
  store::Transaction tx;
  tx.message = "forget " + util::join(ids, ", ") + ": the installed version has every edit";
  tx.drop = ids;
  tx.site_drop = detail::unreferenced(existing, {}, tx.drop);
  std::string oid = history.commit(tx);
  auto marks = detail::markers_for(s, after_commit(existing, tx));
  s.host.write(marks.write);
  s.host.remove(marks.remove);
  return oid;
}

}  // namespace detail

namespace {

/// --system on files in a folder the environment shares: the apply runs in the history
/// of the folder's owner, so the patch outlives this environment and every environment
/// that sees the folder finds it. nullopt when the files are the environment's own.
std::optional<ApplyResult> apply_at_home(Session& s, const std::vector<recipe::Recipe>& recipes,
                                         const AfterWrite& check) {
  if (!s.system || detail::shared_homes(s, false).empty()) return std::nullopt;
  Plan seen = plan(s, recipes);
  if (!seen.ok()) return std::nullopt;  // the usual apply reports why
  detail::refuse_shared(s, seen);       // an editable checkout stays refused with --system
  auto home = detail::home_of_recipes(s, seen);
  if (!home) return std::nullopt;
  std::vector<std::string> where;
  for (auto& fc : seen.files)
    if (where.empty() || where.back() != fc.site_dir) where.push_back(fc.site_dir);
  spdlog::warn("--system: writing outside this environment ({}, which belongs to {}); the history goes with "
               "that folder, to {}: every environment that uses it lists, verifies and rolls the patch back",
               util::join(where, ", "), home->shared_by, home->state_dir);
  // --system stays: in the owner's view the folder is its own, but a Debian package or an
  // EXTERNALLY-MANAGED marker may still own the files, and the user said yes to that.
  ApplyResult res = apply(*home, recipes, false, check);
  res.plan.placement = seen.placement;
  std::vector<std::string> ids;
  for (auto& r : recipes) ids.push_back(r.id);
  res.plan.placement.push_back("the history of " + util::join(ids, ", ") + " is in " + home->state_dir +
                               ", with " + home->shared_by);
  return res;
}

/// What finishing an interrupted apply wrote, for a failure after it ("" when nothing).
std::string recovered_note(const ApplyResult& res) {
  if (res.recovered_files.empty()) return "";
  return util::join(res.recovered, "\n") + ": those files stay as that apply planned them (sitepatch list shows "
         "it; sitepatch rollback ID undoes it):\n  " + util::join(res.recovered_files, "\n  ");
}

/// apply's steps once the history is clean: plan, then write it.
ApplyResult apply_planned(Session& s, std::vector<recipe::Recipe> recipes, ApplyResult res,
                          std::vector<store::PatchRecord>& existing, std::unique_ptr<detail::HistoryAccess> history,
                          const std::string& state) {
  res.plan = detail::plan_against(s, std::move(recipes), existing);
  if (!s.force) detail::refuse_unbound(res.plan);
  if (!res.plan.ok()) return res;
  detail::refuse_shared(s, res.plan);
  if (res.plan.files.empty()) {
    if (!res.plan.forget.empty()) res.commit = detail::forget_records(s, *history, existing, res.plan.forget);
    return res;
  }
  if (!history) history = detail::HistoryAccess::open(s, true);
  detail::write_plan(s, res, existing, *history, state);
  return res;
}

/// The apply's check, run while the lock is held and its records say "checking": kept
/// ("checking" becomes "applied", one commit) when it passes, rolled back under the same
/// lock when it fails, throws or a signal stops it.
void run_check(Session& s, host::Lock& lock, ApplyResult& res, const AfterWrite& check) {
  std::vector<std::string> ids;
  for (auto& r : res.plan.recipes) ids.push_back(r.id);
  try {
    res.kept = check(res.plan) && !util::interrupted();
  } catch (...) {
    res.undone = detail::rollback_locked(s, lock, ids);
    throw;
  }
  if (!res.kept) {
    res.undone = detail::rollback_locked(s, lock, ids);
    return;
  }
  auto history = detail::HistoryAccess::open(s, false, true);
  store::Transaction tx;
  for (auto& r : history->patches())
    if (r.state == "checking" && std::count(ids.begin(), ids.end(), r.id)) {
      tx.put.push_back(r);
      tx.put.back().state = "applied";
    }
  tx.message = "checked " + util::join(ids, ", ") + ": the check after its apply passed";
  res.commit = history->commit(tx);
}

}  // namespace

namespace detail {

void write_plan(Session& s, ApplyResult& res, const std::vector<store::PatchRecord>& existing,
                HistoryAccess& history, const std::string& state) {
  // From the originals' commit to the apply's: a signal waits for the whole write, so
  // no half-written package is left to the next command (the caller reports it).
  util::InterruptGuard whole_write;
  int64_t now = std::time(nullptr);

  // 1. Originals (and the planned results) into the history, marked pending.
  store::Transaction saved;
  saved.put = detail::records_for(res.plan, existing, s.distributions(), "pending", now);
  std::string ids = detail::ids_of(saved.put);
  saved.message = std::string(s.reapply ? "reapply " : "apply ") + ids + ": originals saved, writing";
  saved.trailers = detail::trailers_for(saved.put);
  for (auto& fc : res.plan.files) saved.site[fc.rel] = fc.old_text;
  saved.drop = res.plan.forget;
  saved.site_drop = detail::unreferenced(existing, saved.put, saved.drop);
  auto t0 = std::chrono::steady_clock::now();
  auto ms = [&t0] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  auto after = after_commit(existing, saved);
  std::vector<std::string> written;
  for (auto& fc : res.plan.files) written.push_back(fc.path);
  read_ahead_of_write(s, res.plan.files, after, written);
  history.commit(saved);
  spdlog::info("apply: originals of {} file(s) committed ({:.0f} ms)", res.plan.files.size(), ms());

  // 2. Write, all or nothing, refusing any file that changed since it was read.
  std::vector<host::WriteRequest> writes;
  for (auto& fc : res.plan.files) writes.push_back({fc.path, fc.new_text, fc.old_sha, fc.site_dir});
  // pip's RECORD rows and the note beside the files go in the same all-or-nothing
  // batch, after the files.
  auto stale_notes = detail::add_sidecars(s, res.plan.files, after, writes);
  try {
    s.host.write(writes);
  } catch (const Error& e) {
    auto written = written_now(s, res.plan);
    bool none = written && std::none_of(written->begin(), written->end(), [](bool w) { return w; });
    if (!none) throw Error(half_written(s, res.plan, e.what(), written, ids), Exit::partial);
    // Nothing of ours reached the disk: put the records back as they were.
    history.commit(undo_of(saved, existing, ids));
    throw;
  }
  if (!stale_notes.empty()) s.host.remove(stale_notes);
  spdlog::info("apply: {} file(s) written ({:.0f} ms)", writes.size(), ms());

  // 3. Bytecode of the old text must not outlive it.
  res.pyc_removed = detail::remove_bytecode(s.host, written);

  // 4. The apply itself, one commit.
  res.commit = commit_applied(s, history, saved, res.plan, state);
  spdlog::info("apply: {} .pyc removed, committed {} ({:.0f} ms)", res.pyc_removed.size(),
               res.commit.substr(0, 10), ms());
  res.written = true;
}

std::unique_ptr<HistoryAccess> open_cleaned(Session& s, host::Lock& lock, std::vector<store::PatchRecord>& existing,
                                            std::vector<std::string>& notes, std::vector<std::string>* recovered) {
  return open_cleaned_history(s, lock, existing, notes, recovered);
}

}  // namespace detail

ApplyResult apply(Session& s, std::vector<recipe::Recipe> recipes, bool dry_run, const AfterWrite& check) {
  ApplyResult res;
  if (dry_run) {
    // Exits as apply would: the same refusals after the same plan.
    res.plan = plan(s, std::move(recipes));
    if (!s.force) detail::refuse_unbound(res.plan);
    if (res.plan.ok()) detail::refuse_shared(s, res.plan);
    return res;
  }
  if (auto at_home = apply_at_home(s, recipes, check)) return std::move(*at_home);
  auto lock = s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  read_ahead_of_plan(s, recipes);
  std::vector<store::PatchRecord> existing;
  auto history = open_cleaned_history(s, *lock, existing, res.recovered, &res.recovered_files);
  std::string finished = recovered_note(res);
  try {
    res = apply_planned(s, std::move(recipes), std::move(res), existing, std::move(history),
                        check ? "checking" : "applied");
    if (check && res.written) run_check(s, *lock, res, check);
    return res;
  } catch (const Error& e) {
    // Finishing the interrupted apply wrote files: "nothing was changed" would be untrue.
    if (finished.empty() || e.code() != Exit::failed) throw;
    throw Error(std::string(e.what()) + "\n" + finished, Exit::partial);
  }
}

namespace detail {

bool any_pending(const std::vector<store::PatchRecord>& records) {
  return std::any_of(records.begin(), records.end(), [](auto& r) { return r.state == "pending"; });
}

std::vector<std::string> unchecked_ids(const std::vector<store::PatchRecord>& records) {
  std::vector<std::string> ids;
  for (auto& r : records)
    if (r.state == "checking") ids.push_back(r.id);
  return ids;
}

bool undo_unchecked(Session& s, host::Lock& lock, const std::vector<store::PatchRecord>& records,
                    std::vector<std::string>& notes) {
  auto ids = unchecked_ids(records);
  if (ids.empty()) return false;
  auto done = rollback_locked(s, lock, ids);
  notes.insert(notes.end(), done.notes.begin(), done.notes.end());
  notes.push_back("rolled back " + util::join(ids, ", ") + ": the check after its apply never passed (the "
                  "sitepatch that ran it was stopped); apply it again to check it again");
  return true;
}

/// What recipes sharing a file meant it to become: each one's step starts from the one
/// before's result, so the last is the result no other step starts from. Records come
/// sorted by id, not in the order they were applied.
const std::string& last_step(const std::vector<const store::FileRecord*>& chain) {
  for (auto* f : chain) {
    bool continued = std::any_of(chain.begin(), chain.end(),
                                 [&](auto* g) { return g != f && g->before == f->after && g->after != g->before; });
    if (!continued) return f->after;
  }
  return chain.back()->after;
}

std::vector<std::string> recover(Session& s, HistoryAccess& history, std::vector<std::string>* written) {
  std::vector<store::PatchRecord> pending;
  for (auto& r : history.patches())
    if (r.state == "pending") pending.push_back(r);
  if (pending.empty()) return {};

  // The pending commit's site/ holds each file as it was found; its records hold
  // what the interrupted apply meant to write. Finish that apply.
  std::map<std::string, std::pair<std::string, std::string>> want;  // path -> (found, final)
  std::map<std::string, std::string> rel_of, site_of;
  std::map<std::string, std::vector<const store::FileRecord*>> steps;  // path -> each recipe's step
  for (auto& r : pending)
    for (auto& f : r.files) {
      std::string path = f.site_dir + "/" + f.rel;
      auto found = history.site_file(f.rel);
      auto& w = want[path];
      if (w.first.empty()) w.first = found ? *found : f.before;
      steps[path].push_back(&f);
      rel_of[path] = f.rel;
      site_of[path] = f.site_dir;
    }
  for (auto& [path, chain] : steps) want[path].second = last_step(chain);
  std::vector<std::string> paths;
  for (auto& [p, _] : want) paths.push_back(p);
  auto now = s.host.read(paths);
  std::vector<host::WriteRequest> writes;
  for (auto& f : now) {
    auto& [found, final_text] = want[f.path];
    if (f.exists && f.content == final_text) continue;
    if (f.exists && f.content == found) {
      writes.push_back({f.path, final_text, util::sha256_hex(found), site_of[f.path]});
      continue;
    }
    throw Error("an interrupted apply of " + ids_of(pending) + " left " + rel_of[f.path] +
                " neither as it was nor as planned; the originals are in " + s.state_dir +
                " (git --git-dir " + s.state_dir + " log -p)");
  }
  std::vector<FileChange> finals;
  for (auto& [p, w] : want) {
    FileChange fc;
    fc.rel = rel_of[p];
    fc.site_dir = site_of[p];
    fc.new_text = w.second;
    finals.push_back(std::move(fc));
  }
  size_t files_written = writes.size();
  std::vector<store::PatchRecord> all = history.patches();
  for (auto& r : all) r.state = "applied";
  add_sidecars(s, finals, all, writes);
  s.host.write(writes);
  if (written)
    for (size_t i = 0; i < files_written; ++i) written->push_back(writes[i].path);
  remove_bytecode(s.host, paths);
  store::Transaction done;
  done.put = pending;
  for (auto& r : done.put) r.state = "applied";
  done.message = "apply " + ids_of(pending) + " (finished after an interruption)";
  done.trailers = trailers_for(pending);
  for (auto& [p, w] : want) done.site[rel_of[p]] = w.second;
  history.commit(done);
  return {"finished an interrupted apply of " + ids_of(pending) + " (" +
          std::to_string(files_written) + " file(s) written)"};
}

}  // namespace detail
}  // namespace sitepatch::engine

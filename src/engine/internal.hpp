#pragma once
// Pieces the engine's commands share; not part of the public API. Each is defined in the
// room of src/engine/ that owns it (lifecycle/, records/, edits/, capture/, ...: the head
// comment of each room's principal file, and ARCHITECTURE.md, say what it owns);
// session.cpp, py_files.cpp and python_answer, which several rooms use, stay here.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::python { class Module; }

namespace sitepatch::engine::detail {

class HistoryAccess;

struct PyFile {
  std::string path;  // absolute
  std::string rel;   // as reported
};
/// Every .py file under `root` (`rel` is `rel_prefix` + its path below root), one
/// listing round per folder depth; each real folder once, so links cannot loop. A link
/// whose target lies outside root's real path is not followed; `outside` gets its rel.
std::vector<PyFile> python_files(host::Host& host, const std::string& root, const std::string& rel_prefix,
                                 std::vector<std::string>* outside = nullptr);

/// plan() against the records already in the history (apply reads them once). `to_write`:
/// the plan will be written, so each file's `checked` (what verify may take on trust) is
/// worked out; a plan only shown needs none of it.
Plan plan_against(Session& s, std::vector<recipe::Recipe> recipes,
                  const std::vector<store::PatchRecord>& existing, bool to_write = true);

/// apply's writing steps for a plan whose files are read and checked (`res.plan`): the
/// originals (old_text) committed as pending, every file written with its old_sha
/// checked, pip's RECORD rows and the notes in the same batch, bytecode removed, the
/// apply committed. `existing`: the history's records before it.
/// `state` is what the apply's records say once written: "applied", or "checking" while
/// a check must still pass (the next writer rolls back a "checking" record it finds).
void write_plan(Session& s, ApplyResult& res, const std::vector<store::PatchRecord>& existing, HistoryAccess& history,
                const std::string& state = "applied");

/// Under the writer's `lock`: the history, after what a killed command left is cleaned
/// and an interrupted apply finished (`notes` say so; `recovered` gets the files that
/// wrote); `existing` gets its records. nullptr when there is no history.
std::unique_ptr<HistoryAccess> open_cleaned(Session& s, host::Lock& lock, std::vector<store::PatchRecord>& existing,
                                            std::vector<std::string>& notes, std::vector<std::string>* recovered);

/// Drops the records of recipes (`ids`) the installed version already contains, in one
/// commit ("forget ..."), and the notes beside their files; the commit's id.
std::string forget_records(Session& s, HistoryAccess& history, const std::vector<store::PatchRecord>& existing,
                           const std::vector<std::string>& ids);

/// The recipes of `p` whose edits are all in the files because the installed
/// distribution came patched with them (wheel/shipped.cpp; its provenance intact):
/// `p.shipped`, said in `p.notes` instead of "upstream has the fix"; those with a record
/// here (`recorded`) go into `p.forget`.
void note_shipped(Session& s, Plan& p, const std::set<std::string>& recorded);

/// Fails every planned edit whose target another applied recipe already patches (the
/// same definition, or one inside the other), naming that recipe and the remedy.
void refuse_overlaps(const Session& s, Plan& p, const std::vector<store::PatchRecord>& existing);

/// The notes beside patched files (marker.cpp) as they must be once `after` are the
/// applied patches: files to write (compare-and-swap, inside their site folder) and to
/// remove.
struct MarkerChange {
  std::vector<host::WriteRequest> write;
  std::vector<std::string> remove;
};
MarkerChange markers_for(Session& s, const std::vector<store::PatchRecord>& after);
/// The same from the notes already read, `now` in marker_paths' order.
MarkerChange markers_for(Session& s, const std::vector<store::PatchRecord>& after,
                         const std::vector<host::FileData>& now);
/// The notes markers_for reads.
std::vector<std::string> marker_paths(const Session& s, const std::vector<store::PatchRecord>& after);

/// When there is no history but a note says files were patched: the message that says
/// so and how to get pip's files back.
/// `known`: the state folders of the histories this command opened; a note that names
/// one of them is not lost. Notes in the environment's own folders count only when
/// `own_missing`.
std::optional<std::string> lost_history(Session& s, const std::vector<std::string>& known, bool own_missing);

/// The recipe text `r` keeps, read as it was applied: with its record's replace_indent
/// (absolute for a record before format 3) unless the text names one; `path` in messages.
recipe::Recipe recorded_recipe(const store::PatchRecord& r, const std::string& path);

/// The edits of `r` (as "module:target") aimed at `rel` that `now` no longer contains:
/// applying one to it would change something. Empty when all are there, or when the
/// record cannot tell (older records, a recipe this version cannot parse).
std::vector<std::string> missing_edits(const store::PatchRecord& r, const std::string& rel,
                                       const python::Module& now);

/// Notes on where each planned file lives: a folder the environment does not own
/// (system, base interpreter, .pth), and a file that shadows another further down
/// sys.path. `-v` prints each file's path.
void note_placement(Session& s, Plan& p);

/// A line for each planned file that lies in the source checkout of an editable
/// install (found through direct_url.json or an .egg-link): apply refuses those.
std::vector<std::string> editable_files(Session& s, const Plan& p);

/// Throws (nothing written) when a planned file lies in a folder the environment does
/// not own, belongs to a Debian package or to a PEP 668 externally managed Python, and
/// the session was not given --system; or lies in an editable install's checkout.
void refuse_shared(Session& s, const Plan& p);

/// Sessions for the histories of the folders `s` sees but does not own, one per history
/// (homes.cpp); with `existing_only`, only those whose state folder exists.
std::vector<Session> shared_homes(Session& s, bool existing_only = true);

/// Calls `f` with each history a reader looks at, the environment's own first, each
/// under its shared lock; returns the state folders of those that exist.
std::vector<std::string> each_history(Session& s, const std::function<void(Session&, HistoryAccess&)>& f);

/// With --system: the session of the history that keeps the planned files, when that
/// is not the environment's own; nullopt when it is. Throws (nothing written) when a
/// recipe, or the recipes together, would need two histories.
std::optional<Session> home_of_recipes(Session& s, const Plan& p);

/// The RECORD rewrites that keep pip's rows of the changed files true to their new
/// text (record_sync.cpp); none for a file no .dist-info lists.
std::vector<host::WriteRequest> record_updates(Session& s, const std::vector<FileChange>& changes);
/// The same from the RECORDs already read (record_paths' files, in any order).
std::vector<host::WriteRequest> record_updates(Session& s, const std::vector<FileChange>& changes,
                                               const std::vector<host::FileData>& records);
/// The RECORDs record_updates reads.
std::vector<std::string> record_paths(Session& s, const std::vector<FileChange>& changes);
/// conda's conda-meta records that list the changed files with a hash, rewritten to the
/// hash of their new text (conda_meta.cpp); none outside a conda environment.
std::vector<host::WriteRequest> conda_updates(Session& s, const std::vector<FileChange>& changes);
/// Where conda keeps its records: `<prefix>/conda-meta`.
std::string conda_meta_dir(const Session& s);
/// A write's sidecars, after its files in `writes`: pip's RECORD rows for `changes`
/// (record_updates), then the notes for `after` (markers_for), both read in one round
/// trip. Returns the notes to remove once the write is done.
std::vector<std::string> add_sidecars(Session& s, const std::vector<FileChange>& changes,
                                      const std::vector<store::PatchRecord>& after,
                                      std::vector<host::WriteRequest>& writes);

/// Folder and name of the lock every writer takes.
std::string lock_path(const Session& s);

/// Removes the __pycache__ entries of every changed source (a .pyc checked by hash,
/// or written within the same second, would otherwise hide the edit). Returns the
/// removed paths.
std::vector<std::string> remove_bytecode(host::Host& host, const std::vector<std::string>& sources);
/// The __pycache__ folders remove_bytecode lists for `sources`.
std::vector<std::string> bytecode_dirs(const std::vector<std::string>& sources);

/// Finishes an apply that an earlier command began but did not finish (its records
/// are still "pending"): writes what is missing, commits. Returns what it did; the
/// files it wrote are added to `written` when given.
std::vector<std::string> recover(Session& s, HistoryAccess& history, std::vector<std::string>* written = nullptr);

/// Whether an earlier command left an apply unfinished (a record still "pending").
bool any_pending(const std::vector<store::PatchRecord>& records);

/// The ids of records whose apply's check never passed (state "checking"): the command
/// that ran it was killed before it could roll them back.
std::vector<std::string> unchecked_ids(const std::vector<store::PatchRecord>& records);

/// The edits of `parsed` (r's recipe) that `r` recorded in file `rel`, in record order.
std::vector<const recipe::Edit*> recorded_edits_in(const store::PatchRecord& r, const recipe::Recipe& parsed,
                                                   const std::string& rel);

/// `text` (of file `rel`) with the ensure-imports of `kept`'s edits there made again:
/// a rollback of another recipe does not take away an import `kept` needs.
std::string ensure_kept_imports(const store::PatchRecord& kept, const std::string& rel, const std::string& text);

/// rollback of `ids` by a writer that already holds the environment's lock.
RollbackResult rollback_locked(Session& s, host::Lock& lock, const std::vector<std::string>& ids);

/// What a writer does first, under its lock: roll back the applies whose check never
/// passed (`notes` say so). True when it rolled any back.
bool undo_unchecked(Session& s, host::Lock& lock, const std::vector<store::PatchRecord>& records,
                    std::vector<std::string>& notes);

/// A warning on `st` when its target is an abstract method (`@abstractmethod`, or a body
/// that only raises NotImplementedError), naming the overrides found in its
/// distribution: the edit changes code that never runs (abstract.cpp).
void note_abstract(Session& s, EditStatus& st, const recipe::Edit& e, const std::string& site_dir);

/// The recipe's `requires:` that the installed distributions do not meet, each said
/// ("" when all hold), as plan words them.
std::string requirements_unmet(Session& s, const recipe::Recipe& r);

/// Under the writer's lock: removes the lock files libgit2 and the temps sitepatch
/// leave in the history when killed. Returns a note for the user when it removed any.
std::vector<std::string> clean_history_locks(Session& s);

/// The site folders clean_temps always looks in: the environment's own.
std::vector<std::string> own_site_dirs(const Session& s);

/// The folders clean_temps lists for `records` (their owners found, in one round trip).
std::vector<std::string> temp_folders(Session& s, const std::vector<store::PatchRecord>& records);

/// Under the writer's `lock`: removes the temps a killed writer of this history left
/// beside the files of `records` (whole copies), only those its tag names (Lock) and
/// only inside the site folders. Returns a note when it removed any.
std::vector<std::string> clean_temps(Session& s, const std::vector<store::PatchRecord>& records, host::Lock& lock);

/// A shared lock while a reader looks at the history and the files (nullptr when
/// there is no history to look at): a reader never sees a write half done.
std::unique_ptr<host::Lock> read_lock(Session& s);

/// The records named by `ids` (all when empty); an unknown id is an error that
/// lists what is applied.
std::vector<store::PatchRecord> select(const std::vector<store::PatchRecord>& all,
                                       const std::vector<std::string>& ids);

/// `records` (some of `all`, the history's applied patches) against their files as they
/// are now, read in one batch into `now` (path -> file): what verify reports.
std::vector<PatchStatus> statuses_of(Session& s, const HistoryAccess& history,
                                     const std::vector<store::PatchRecord>& all,
                                     const std::vector<store::PatchRecord>& records,
                                     std::map<std::string, host::FileData>& now);

/// Whether each patched file of `records` (their statuses, in order), as `now` holds it,
/// would still import: compiled by the environment's Python, no name its patches use
/// left unbound, every module its recipe ensure-imports importable. Sets
/// FileStatus::broken (module_health.cpp).
void check_modules(Session& s, const std::vector<store::PatchRecord>& records, std::vector<PatchStatus>& statuses,
                   const std::map<std::string, host::FileData>& now);

/// "<invocation> <command>": a command the user can paste to reach this environment.
std::string fix_command(const Session& s, const std::string& command);

/// Parent folder and base name of a path.
std::pair<std::string, std::string> split_path(const std::string& path);

/// "name==version", or "" when `dist` is empty.
std::string dist_label(const std::string& dist, const std::string& version);

}  // namespace sitepatch::engine::detail

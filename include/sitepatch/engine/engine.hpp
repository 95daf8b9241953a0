#pragma once
// The only module that combines the others: plan, apply, verify, rollback, list,
// log, show over one environment reached through a Host. Returns data; the CLI
// decides how it looks.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/site/environment.hpp"
#include "sitepatch/store/history.hpp"

namespace sitepatch::engine {

namespace detail {
struct Mirror;
}

/// One command's view of one environment: the host, what its Python reported,
/// where its history lives.
struct Session {
  Session(host::Host& h, site::Environment e, std::string dir)
      : host(h), env(std::move(e)), state_dir(std::move(dir)) {}

  host::Host& host;
  site::Environment env;
  std::string state_dir;  // the history's bare repository (and its lock file)
  bool force = false;     // apply even when `requires:` does not match
  bool system = false;    // apply may write into folders the environment shares (--system)
  bool missing_ok = false;  // rollback skips ids that are not applied (--missing-ok)
  bool reapply = false;   // apply runs for `reapply`: the history's entries say so
  /// Plans a wheel's files (`sitepatch wheel`): the modules new imports name are the
  /// installing environment's to provide, not the compiling Python's.
  bool wheel = false;
  int lock_timeout_ms = 30000;  // how long a writer waits for another one to finish
  /// The sitepatch invocation that reaches this environment, for the commands messages
  /// suggest ("sitepatch --venv /srv/.venv"); the CLI sets it.
  std::string invocation;
  /// "" for the environment's own history; for the history of a folder it shares
  /// (for_home), who owns that folder ("the base interpreter at /opt/py").
  std::string shared_by;
  /// Warnings this command has said already: a reapply reads the history three times,
  /// and a user reads each warning once.
  std::set<std::string> warned;

  /// Probes `venv` through `host` (its Python starts once); `state_dir` empty means
  /// <prefix>/.sitepatch.
  static Session open(host::Host& host, const std::string& venv, const std::string& state_dir);
  /// The installed distributions, read once on first use.
  const host::DistributionIndex& distributions();
  /// The same environment seen from the history of a folder it shares but does not own
  /// (a base interpreter's, the system's, a .pth folder's): prefix and state folder are
  /// the owner's, site folders only those that history keeps.
  Session for_home(const site::HistoryHome& home) const;

  /// A remote history's local copy, fetched once per command (engine-internal).
  std::shared_ptr<detail::Mirror> mirror;

 private:
  std::shared_ptr<host::DistributionIndex> dists_;
};

enum class EditState { will_apply, already_applied, skipped, failed };
std::string_view state_name(EditState s);  // "will apply" / "already applied" / "skipped" / "fails"

struct EditStatus {
  std::string recipe_id;
  std::string where;    // module:target as written in the recipe
  std::string action;   // replace-body, ...
  std::string file;     // path relative to site-packages ("" when not resolved)
  int line = 0;         // target's line in that file
  EditState state = EditState::will_apply;
  std::string message;  // why it fails, or a note
  std::string recipe_path;
  int recipe_line = 0;
  int recipe_column = 0;
  std::string module;   // the module that defines the target (a followed re-export's end)
  std::string followed; // "fp4_quantize is re-exported: a -> b; patching it there", or ""
  std::string original; // the target's text before the edit
  std::string upstream; // "get_cuda_version changed in 0.6.0: review the diff", or ""
  std::string upstream_diff;  // the target's text when last applied -> now
  std::vector<std::string> unbound;  // names its new code uses that the module never binds
  std::string warning;  // what plan says about them, with the remedy ("" when none)
};

/// One file a plan changes. `steps` holds the text after each recipe touching it,
/// in order, so the history can keep each recipe's own before and after.
struct FileChange {
  std::string rel;
  std::string site_dir;
  std::string path;       // absolute
  std::string old_text;
  std::string new_text;
  std::string old_sha;    // sha256 hex of old_text, checked again before writing
  std::string dist;       // owning distribution, "" when none
  std::string version;
  std::string debian_package;  // the dpkg package whose file list names it ("" when none)
  std::vector<std::pair<std::string, std::string>> steps;  // recipe id, text after it
  std::string diff;       // unified, paths relative to site-packages
  std::string checked;    // one recipe's edits that left no name unbound: new_text's key for
                          // FileRecord::checked once Python compiled it ("" otherwise)
};

struct Plan {
  std::vector<recipe::Recipe> recipes;
  std::vector<EditStatus> edits;
  std::vector<FileChange> files;
  std::vector<std::string> problems;  // recipe-level failures (requires: ...)
  std::vector<std::string> notes;     // recipe-level news (an upgrade replaced a patched file)
  std::vector<std::string> placement; // a file in a folder the environment shares, a shadowed file
  std::vector<std::string> forget;    // recipes the new version already contains: apply drops their records
  std::vector<std::string> shipped;   // recipes the installed distribution came patched with (its dist-info
                                      // keeps them: a wheel `sitepatch wheel` built); nothing to apply
  bool ok() const;
};

/// Locates every edit and computes the new text of every file. Reads, never writes.
Plan plan(Session& s, std::vector<recipe::Recipe> recipes);

struct RollbackResult {
  std::vector<std::string> ids;
  std::vector<FileChange> files;  // old_text = now, new_text = restored
  std::vector<std::string> notes;
  bool written = false;
  std::string commit;
  std::vector<std::string> pyc_removed;
};

struct ApplyResult {
  Plan plan;
  bool written = false;
  std::string commit;                 // history commit of this apply
  std::vector<std::string> pyc_removed;
  std::vector<std::string> recovered; // notes about an interrupted earlier apply finished now
  std::vector<std::string> recovered_files;  // the files finishing it wrote (not this apply's)
  bool kept = true;                   // false: its check failed or was stopped, and it was rolled back
  RollbackResult undone;              // that rollback
};

/// A check of what an apply wrote (apply --check, --check-with), run with the
/// environment's lock still held, so no other command sees the apply before it passed:
/// true keeps it.
using AfterWrite = std::function<bool(const Plan&)>;

/// plan, then (unless dry_run) check, save originals, write, clear .pyc, commit.
/// All or nothing: throws sitepatch::Error (nothing written) when any edit fails.
/// With `check`: the records say "checking" until it returns true (then one more commit
/// says "applied"); when it returns false, throws, or an InterruptGuard noted a signal,
/// the apply is rolled back under the same lock (`kept` false, `undone` what it did);
/// when the process dies first, the next command that writes rolls it back.
ApplyResult apply(Session& s, std::vector<recipe::Recipe> recipes, bool dry_run, const AfterWrite& check = {});

enum class FileState { applied, reverted, modified, replaced, missing };
std::string_view state_name(FileState s);

struct FileStatus {
  std::string rel;
  FileState state;
  std::string message;
  std::string upgrade;       // "flashinfer-python 0.5.3 -> 0.6.0" when the owner changed version
  bool uninstalled = false;  // the owner is no longer installed
  std::string broken;        // why the module as it is now would not import ("" when it would, as far as
                             // compile(), its names and its ensure-imports show)
};

struct PatchStatus {
  std::string id;
  std::string description;
  std::string dist;         // first file's owner, "name==version" when known
  std::vector<std::string> dists;  // every file's owner, each once, in file order
  std::string recipe_path;  // as given to apply
  std::string recipe_hash;
  int64_t applied_at = 0;
  std::string history;      // the state folder that keeps it
  std::string shared_by;    // "" when that is the environment's own; else the folder's owner
  /// "" for a patch applied here; for one its distribution came with (a wheel `sitepatch
  /// wheel` built), the dist-info that keeps it and the wheel it was built from.
  std::string shipped;
  std::vector<FileStatus> files;
  FileState state = FileState::applied;  // worst of the files
  // "" when its last apply finished; "writing": stopped while it wrote the files (the
  // originals are saved; the next writer finishes it); "checking": stopped while its
  // check ran, which never passed (the next writer rolls it back).
  std::string unfinished;
  std::string unfinished_message;  // that, with the command that settles it now
};

/// Every applied patch (or those named) against the files as they are now.
std::vector<PatchStatus> verify(Session& s, const std::vector<std::string>& ids);

/// What `sitepatch status` says about a patch after the environment changed under it.
enum class Advice { none, reapply, review, drop };
/// reapply: an upgrade or a reinstall took the edit away; review: someone changed a
/// patched file; drop: the distribution is gone, rollback only forgets the record.
Advice advice_for(const PatchStatus& p);


/// Undoes the named patches (or all): originals back, or a three-way merge that
/// keeps other recipes' edits in a shared file. Throws when it cannot undo cleanly.
RollbackResult rollback(Session& s, const std::vector<std::string>& ids, bool all, bool dry_run);

struct AdoptResult {
  std::string id;
  std::vector<FileChange> files;  // old_text = as sitepatch left it, new_text = as it is now
  bool written = false;
  std::string commit;
  std::vector<std::string> notes;
};

/// Records the files of applied patch `id` as they are now (changed by someone else
/// around its edits, which are all still there) as its applied state: pip's RECORD rows,
/// then one commit; rollback still restores pip's originals. Refuses (nothing written)
/// a patch that needs reapplying or whose distribution is gone, a missing file, an
/// interrupted apply of it. Nothing to adopt: `files` empty.
AdoptResult adopt(Session& s, const std::string& id, bool dry_run);

/// The history, newest first (empty when nothing was ever applied); with `diffs`, each
/// entry's `diff` filled; at most `max` entries (0: all).
std::vector<store::LogEntry> log(Session& s, bool diffs = false, size_t max = 0);

/// What `show WHAT` names: an applied patch, else a commit of the history.
struct Shown {
  std::string id;                         // the applied patch's id; "" for a commit
  std::optional<store::LogEntry> commit;  // the commit, its diff filled; nullopt for a patch
  std::string diff;                       // the patch's diff, or the commit's
};

/// The applied patch `what`, whose unified diff (before -> after of each file)
/// `git apply -R` inside site-packages reverses; else the commit whose hex id starts
/// with `what` (4 characters or more). A patch id wins over a commit prefix. Throws
/// naming the candidates for an ambiguous prefix, and both possibilities for neither.
Shown show(Session& s, const std::string& what);

/// The recipe of an applied patch, as it was applied (kept in the history).
std::string show_recipe(Session& s, const std::string& id);

/// What `reapply` hands to apply: the recipes the history recorded, and what it leaves out.
struct Recorded {
  std::vector<recipe::Recipe> recipes;  // parsed from the history's copies, in id order
  std::vector<std::string> left_out;    // "ID: why", for the patches --all passes over
  std::vector<std::string> shared;      // the ids of those kept with a shared folder's owner
};

/// Under the writer's lock, what a killed command left is finished or cleaned (as apply
/// does first): an interrupted apply is completed. Returns what was done, for the user.
/// reapply runs it before it judges what needs reapplying, which a half-done apply
/// would otherwise show as "changed by someone else".
std::vector<std::string> finish_interrupted(Session& s);

/// For each of `patches` that `reapply ID` would not put back as it stands, why (by id):
/// the installed version is outside the recipe's `requires:`, or an upgrade replaced its
/// files and the recipe says on-upgrade: warn or fail. status suggests `reapply --force`
/// then, with this reason, instead of a command that does nothing or fails.
std::map<std::string, std::string> reapply_blockers(Session& s, const std::vector<PatchStatus>& patches);

/// The recipes of the applied patches `ids` as the history keeps them (`path` names the
/// copy, `origin` the file first applied); with `all`, every patch an upgrade or a
/// reinstall took away. Throws naming what is applied for an unknown id, and for a named
/// patch whose distribution is gone.
Recorded recorded_recipes(Session& s, const std::vector<std::string>& ids, bool all);

}  // namespace sitepatch::engine

#pragma once
// The environment's history: a bare git repository written with libgit2 in the
// state folder, readable by plain `git --git-dir ... log -p`.
//
// Layout of every commit's tree:
//   site/<rel>                      each touched file as sitepatch last left it
//   patches/<id>/patch.json         the applied patch's record (no file bodies)
//   patches/<id>/recipe.yaml        the recipe as applied
//   patches/<id>/before/<rel>       the file before this patch was applied
//   patches/<id>/after/<rel>        the file right after this patch was applied
//   pristine/<dist>/<version>/<rel> pip's bytes of a distribution's sources, saved by
//                                   `edit` before hand edits (`capture` reads them)
// A patch is applied while patches/<id>/ exists in HEAD's tree.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <utility>

namespace sitepatch::store {

struct FileRecord {
  std::string rel;         // path relative to its site dir
  std::string site_dir;    // absolute site dir it lives in
  std::string dist;        // owning distribution ("" when none)
  std::string version;     // its version
  std::string before;      // bytes before the patch
  std::string after;       // bytes right after it
  std::string checked;     // "<sha256 of after> <python> <version>" when apply found `after`
                           // would import under that Python (compiled, no name lost): verify
                           // need not ask again while the file holds those bytes; "" unknown
};

/// One edit as it was applied: where the recipe aimed it, where it landed (a
/// re-export may have been followed), and the target as it was before the edit, so a
/// later apply can tell that upstream changed it.
struct EditRecord {
  std::string where;        // module:target as the recipe wrote it
  std::string rel;          // the file patched, relative to its site dir
  std::string module;       // the module that defines the target (differs from `where`'s
                            // when a re-export was followed)
  std::string dist;         // owner of `rel`, and its version
  std::string version;
  std::string before_sha;   // sha256 hex of the file before and after this recipe
  std::string after_sha;
  std::string fingerprint;  // sha256 hex of `original`
  std::string original;     // the target's text before the edit
};

struct PatchRecord {
  std::string id;
  std::string description;
  std::string recipe_path;
  std::string recipe_hash;   // sha256 hex of the recipe text
  std::string recipe_text;
  std::string state;         // "pending" (originals saved, writes under way) or "applied"
  int64_t applied_at = 0;    // unix seconds
  std::vector<FileRecord> files;
  std::vector<EditRecord> edits;  // empty in records written before format 2
  // How its recipe text reads lines 2+ of a replace's `old` and `new`: "relative" (to
  // the match's indentation) or "absolute" (at their column), what records before
  // format 3 mean, whose recipes were applied so.
  std::string replace_indent = "relative";
};

/// One commit's worth of changes, laid out by History::commit. Applied in this order:
/// drop, put (a put of a dropped id wins), site_drop, site. Ids are one path component;
/// rels are plain relative paths (no "", ".", ".." parts), one record per rel in a patch.
struct Transaction {
  std::string message;                              // first line: "apply flashinfer-dynamo"
  std::vector<std::pair<std::string, std::string>> trailers;  // Sitepatch-Recipe: ...
  std::vector<PatchRecord> put;                     // patches to add or replace
  std::vector<std::string> drop;                    // patch ids to remove
  std::map<std::string, std::string> site;          // site/<rel> contents to set
  std::vector<std::string> site_drop;               // site/<rel> entries to remove
  std::map<std::string, std::string> pristine;      // pristine/<path> contents to set (after the rest)
  std::vector<std::string> pristine_drop;           // pristine/<path> files or folders to remove (before)
};

struct LogEntry {
  std::string oid;        // hex
  int64_t time = 0;
  std::string summary;    // first line
  std::string message;    // whole message
  std::string author;     // "name <email>"
  std::string diff;       // what it did to the files (History::diff_of), when asked
};

class History {
 public:
  /// Opens the repository in `dir` (bare), creating it when `create` is set;
  /// nullopt when it does not exist and `create` is false. A history that `travels`
  /// (a copy sent to another machine) keeps the objects its commits write in memory
  /// until pack() writes them as one pack: no loose object file is made and removed.
  static std::unique_ptr<History> open(const std::string& dir, bool create, bool travels = false);
  ~History();

  /// Patches applied as of HEAD, in id order, with file bodies.
  std::vector<PatchRecord> patches() const;
  std::optional<PatchRecord> patch(const std::string& id) const;

  /// HEAD's site/<rel>: the file as sitepatch last left it (nullopt when untracked).
  std::optional<std::string> site_file(const std::string& rel) const;

  /// HEAD's pristine/<path> (nullopt when absent).
  std::optional<std::string> pristine_file(const std::string& path) const;

  /// Every distinct text `site/<rel>` held in any commit, newest first: the originals an
  /// apply saved, the results it wrote, long after a rollback dropped them.
  std::vector<std::string> site_file_versions(const std::string& rel) const;

  /// Writes one commit on HEAD (main); returns its oid.
  std::string commit(const Transaction& tx);

  /// Puts the objects written since the last pack (in memory, or loose) into one new
  /// pack; once there are many packs, everything reachable from HEAD into one and the
  /// older packs go: a history that travels between machines stays a few files.
  void pack();

  /// Commits on HEAD, newest first.
  std::vector<LogEntry> log() const;

  /// What commit `oid` did to the files the history tracks (site/ against its parent's),
  /// as a unified diff with paths relative to the site folder; a rollback's files are
  /// shown going back to their originals. "" when it changed no file.
  std::string diff_of(const std::string& oid) const;

  /// The repository folder (for `git --git-dir`).
  const std::string& path() const;

 private:
  struct Impl;
  explicit History(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A unified diff with git-style headers (diff --git a/<path> b/<path>, ---/+++),
/// empty when equal. libgit2 git_patch_from_buffers.
std::string unified_diff(const std::string& old_text, const std::string& new_text,
                         const std::string& path);

/// The lines `new_text` adds to `old_text` (changed lines included), without their line
/// ends, in order. libgit2's line diff.
std::vector<std::string> added_lines(const std::string& old_text, const std::string& new_text);

/// The lines of `new_text` that differ from `old_text`: each hunk of libgit2's line diff
/// as [first, last] rows (0-based); a hunk that only deletes gives the two rows it lies
/// between.
std::vector<std::pair<size_t, size_t>> changed_rows(const std::string& old_text, const std::string& new_text);

struct MergeResult {
  bool clean = false;
  std::string content;  // merged bytes, with conflict markers when not clean
};

/// Three-way merge of text files (libgit2 git_merge_file). Trivial cases (two sides
/// equal) are clean for any bytes; a real binary conflict is not clean and keeps `ours`.
MergeResult merge3(const std::string& base, const std::string& ours, const std::string& theirs,
                   const std::string& path);

/// Three-way merge of sequences of units (a module's statements): each side's changes,
/// found by libgit2's diff of the units, applied to `base`. Changes of the two sides that
/// only touch (one ends at the unit where the other begins) both apply; nullopt when they
/// change the same unit, or insert different units at the same point.
std::optional<std::vector<std::string>> merge_units(const std::vector<std::string>& base,
                                                    const std::vector<std::string>& ours,
                                                    const std::vector<std::string>& theirs);

}  // namespace sitepatch::store

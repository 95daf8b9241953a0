#pragma once
// From hand edits to a recipe: `capture` compares a distribution's files with pip's
// bytes (RECORD's hashes; the originals from the history, a wheel, a folder or a cache)
// and records the named edits as an applied patch; `edit` saves pip's bytes first.
#include <string>
#include <vector>

#include "sitepatch/engine/engine.hpp"
#include "sitepatch/python/capture.hpp"

namespace sitepatch::engine {

struct CaptureOptions {
  std::string dist;         // the distribution, as pip names it
  std::string id;           // the recipe's id ("" = <normalized name>-local)
  std::string original;     // a wheel or an unpacked tree of that version, on this machine ("" = search)
  std::string from;         // a copy the edits were made in (edit --copy), on this machine ("" = in place)
  std::string recipe_path;  // where the recipe goes, for the record ("" = not written)
  bool hash_all = false;    // hash every file, not only those whose size or time changed
  bool whole_file = false;  // a file with changes outside any definition: its whole text (replace-module)
  bool dry_run = false;
};

struct CapturedFile {
  std::string rel;        // relative to its site folder
  std::string original;   // where pip's bytes came from: "the history (sitepatch edit)", "wheel X", ...
  std::vector<python::OutsideChange> outside;  // changes the recipe leaves out
  std::vector<python::MovedImport> moved;      // imports the recipe adds where ensure-import puts them
  std::string problem;    // why the file is compared whole, else ""
  size_t edits = 0;       // named edits found in it
  bool whole = false;     // taken whole (replace-module): nothing it changed has a name
};

struct CaptureResult {
  std::string dist, version;
  std::string id;
  std::string recipe_text;                   // "" when no Python file changed
  std::vector<CapturedFile> files;           // every changed Python file
  std::vector<std::string> left_out;         // other changed files, and why each is left out
  size_t checked = 0;                        // files of the distribution looked at
  size_t hashed = 0;                         // of which read and hashed (size or time changed)
  ApplyResult applied;                       // the plan (against pip's bytes) and the record
};

/// Finds the files of `o.dist` whose bytes differ from its RECORD (or, with `o.from`, the
/// copy's files that differ from the installed ones), pip's bytes of each (checked
/// against RECORD), and the named edits between them; writes the recipe nowhere (the
/// CLI does) but, unless `o.dry_run`, records it as applied: the history keeps pip's
/// bytes as the originals, RECORD's rows follow the edited bytes, the note is written
/// (with `o.from`, the copy's bytes are written into the environment, as apply does).
/// Throws naming each file whose original cannot be found, or a wrong `o.original`.
CaptureResult capture(Session& s, const CaptureOptions& o);

struct SavedDistribution {
  std::string dist, version;
  std::vector<std::string> folders;   // where its modules are: what to edit
  size_t files = 0;                   // Python sources saved
  std::string commit;                 // "" for a dry run
  std::string copy;                   // with a copy: where
  size_t copied = 0;
  std::vector<std::string> notes;     // what finishing an earlier command's work did
};

/// `edit DIST`: saves pip's bytes of every Python source of `dist` in the history
/// (pristine/<name>/<version>/), after checking each against RECORD (a file already
/// edited is refused, named), so that a later capture needs no --original; with
/// `copy_to`, also copies the distribution's files there (on this machine) to edit.
SavedDistribution save_pristine(Session& s, const std::string& dist, const std::string& copy_to, bool dry_run);

}  // namespace sitepatch::engine

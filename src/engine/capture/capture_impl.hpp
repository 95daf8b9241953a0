#pragma once
// What capture.cpp, changed_files.cpp, originals.cpp and pristine.cpp share.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/engine/capture.hpp"
#include "sitepatch/site/distribution.hpp"

namespace sitepatch::engine::detail {

class HistoryAccess;

/// One file of a distribution, as its RECORD names it.
struct DistFile {
  std::string rel;   // relative to the site folder, normalized
  std::string path;  // absolute
  std::string hash;  // RECORD's "sha256=<urlsafe base64>", or conda's "sha256:<hex>"
  std::string size;  // RECORD's size ("" when it gives none)
  std::string text;  // its bytes, once read
};

/// The rows of `d`'s RECORD (or conda's record of it) that name a file of its own with a
/// hash: inside a site folder, not its .dist-info, not bytecode. Throws when it lists no
/// hash at all (an egg-info, a Debian package's dist-info).
std::vector<DistFile> hashed_files(Session& s, const site::Distribution& d);

/// Whether `text` is the bytes the installer wrote (the record's hash).
bool installed_bytes(const DistFile& f, std::string_view text);

/// The distribution `name` (PEP 503), or an error naming what is installed near it.
const site::Distribution& distribution_named(Session& s, const std::string& name);

struct Changes {
  std::vector<DistFile> python;       // .py files whose bytes differ, `text` the edited bytes
  std::vector<std::string> left_out;  // other files that differ, and missing ones: "rel: why"
  size_t checked = 0, hashed = 0;
};

/// The files of `d` whose bytes differ from RECORD: those whose size differs, or whose
/// time is after the install (the .dist-info's INSTALLER), are read and hashed; with
/// `hash_all`, every one.
Changes changed_in_place(Session& s, const site::Distribution& d, bool hash_all);

/// The files of a copy of `d` in `dir` (on this machine) whose bytes differ from RECORD;
/// the installed ones must be pip's (read into `installed`, rel -> bytes).
Changes changed_in_copy(Session& s, const site::Distribution& d, const std::string& dir,
                        std::map<std::string, std::string>& installed);

/// pip's bytes of each of `files` (rel -> text, `from` says where each came from), each
/// checked against RECORD: from `given` (a wheel or a folder) when set; else the
/// history's pristine copy, then uv's and pip's caches on this machine. Throws naming
/// each file no source has.
struct Original {
  std::string text;
  std::string from;
};
std::map<std::string, Original> find_originals(Session& s, HistoryAccess* history, const site::Distribution& d,
                                               const std::vector<DistFile>& files, const std::string& given);

/// The history's folder for pip's bytes of `d`: "<normalized name>/<version>".
std::string pristine_key(const site::Distribution& d);

/// The module a file is: "pkg/sub/mod.py" -> "pkg.sub.mod", "pkg/__init__.py" -> "pkg";
/// "" when its path is no module name.
std::string module_of(const std::string& rel);

/// The named edits from `before` to `now` of file `rel` (python::capture), each aimed at
/// its module (or at the file when its path is no module name); with `whole_file`, or when
/// nothing it changed has a name, the file is taken whole. `cf` gets what the edits leave
/// out, the imports placed elsewhere, the problem, the count and whether it was whole.
std::vector<recipe::Edit> file_edits(const std::string& before, const std::string& now, const std::string& rel,
                                     bool whole_file, CapturedFile& cf);

}  // namespace sitepatch::engine::detail

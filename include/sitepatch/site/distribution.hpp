#pragma once
// Installed distributions, read the way pip and importlib.metadata read them: a
// .dist-info (METADATA, RECORD) or a .egg-info (PKG-INFO; its installed-files.txt, else
// SOURCES.txt, else top_level.txt: Debian's python3-* packages ship only that). Parsing
// is pure; host/distribution_index.hpp asks a Host which distribution owns a file.
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::site {

struct RecordEntry {
  std::string path;    // as in RECORD, relative to the site dir
  std::string hash;    // "sha256=..." or empty
  std::string size;
};

struct Distribution {
  std::string name;        // as in METADATA
  std::string version;
  std::string site_dir;    // absolute
  std::string dist_info;   // folder (or file) name: foo-1.0.dist-info, foo-1.0.egg-info
  /// Every file it lists: filled by `DistributionIndex::files` and `all`, not by `owner`
  /// and `find` (torch's RECORD is 1.25 MB; a question about one file need not read it).
  std::vector<RecordEntry> record;
  /// Top-level packages and modules it owns whole, when it lists no files (an egg-info
  /// with only top_level.txt, or a bare PKG-INFO file).
  std::vector<std::string> top_level;
  /// "conda-meta/NAME-VERSION-BUILD.json" when conda's record of the environment is what
  /// names the file (a conda package with no dist-info); its name and version are conda's.
  std::string conda_meta;
};

/// PEP 503 normalized distribution name: lower case, runs of "-_." become "-".
std::string normalize_name(std::string_view name);
/// A RECORD path with "." and empty segments dropped and "x/.." folded ("a/./b" -> "a/b").
std::string normalize_record_path(std::string_view rel);

/// Name and Version headers of a METADATA file, escaped as util::printable (the file is
/// anyone's text, and they are printed).
std::pair<std::string, std::string> parse_metadata(std::string_view text);
/// RECORD rows (CSV, quoted fields allowed).
std::vector<RecordEntry> parse_record(std::string_view text);
/// installed-files.txt (one path a line, relative to the egg-info folder `egg_info`) as
/// entries relative to the site folder.
std::vector<RecordEntry> parse_installed_files(std::string_view text, std::string_view egg_info);
/// top_level.txt: one name a line.
std::vector<std::string> parse_top_level(std::string_view text);

/// "numpy-1.26.4-py311h64a7726_0.json" -> {"numpy", "1.26.4"}: conda names a package's
/// record NAME-VERSION-BUILD, and neither version nor build holds a '-'.
std::pair<std::string, std::string> parse_conda_record_name(std::string_view file);

}  // namespace sitepatch::site

#pragma once
// Installed distributions, read the way pip and importlib.metadata read them: a
// .dist-info (METADATA, RECORD) or a .egg-info (PKG-INFO; its installed-files.txt, else
// SOURCES.txt, else top_level.txt: Debian's python3-* packages ship only that). Parsing
// is pure; `load_distributions` reads through a Host.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::host { class Host; }

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
  std::vector<RecordEntry> record;
  /// Top-level packages and modules it owns whole, when it lists no files (an egg-info
  /// with only top_level.txt, or a bare PKG-INFO file).
  std::vector<std::string> top_level;
};

/// PEP 503 normalized distribution name: lower case, runs of "-_." become "-".
std::string normalize_name(std::string_view name);
/// A RECORD path with "." and empty segments dropped and "x/.." folded ("a/./b" -> "a/b").
std::string normalize_record_path(std::string_view rel);

/// Name and Version headers of a METADATA file.
std::pair<std::string, std::string> parse_metadata(std::string_view text);
/// RECORD rows (CSV, quoted fields allowed).
std::vector<RecordEntry> parse_record(std::string_view text);
/// installed-files.txt (one path a line, relative to the egg-info folder `egg_info`) as
/// entries relative to the site folder.
std::vector<RecordEntry> parse_installed_files(std::string_view text, std::string_view egg_info);
/// top_level.txt: one name a line.
std::vector<std::string> parse_top_level(std::string_view text);

/// Which distribution owns which file, across an environment's site dirs.
class DistributionIndex {
 public:
  void add(Distribution d);
  /// The distribution whose RECORD lists `rel` in `site_dir`, if any.
  const Distribution* owner(const std::string& site_dir, const std::string& rel) const;
  /// By normalized name (PEP 503).
  const Distribution* find(std::string_view name) const;
  const std::vector<Distribution>& all() const { return dists_; }

 private:
  std::vector<Distribution> dists_;
  std::map<std::pair<std::string, std::string>, size_t> owner_;
  std::map<std::pair<std::string, std::string>, size_t> top_owner_;  // (site dir, top-level name)
};

/// Lists every *.dist-info and *.egg-info in `site_dirs` and reads their metadata and
/// file lists in one batch.
DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs);

}  // namespace sitepatch::site

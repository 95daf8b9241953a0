#pragma once
// Installed distributions from their dist-info: name, version (METADATA) and the
// files they own (RECORD). Parsing is pure; `load_distributions` reads through a Host.
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
  std::string dist_info;   // folder name, e.g. foo-1.0.dist-info
  std::vector<RecordEntry> record;
};

/// PEP 503 normalized distribution name: lower case, runs of "-_." become "-".
std::string normalize_name(std::string_view name);
/// A RECORD path with "." and empty segments dropped and "x/.." folded ("a/./b" -> "a/b").
std::string normalize_record_path(std::string_view rel);

/// Name and Version headers of a METADATA file.
std::pair<std::string, std::string> parse_metadata(std::string_view text);
/// RECORD rows (CSV, quoted fields allowed).
std::vector<RecordEntry> parse_record(std::string_view text);

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
};

/// Lists every *.dist-info in `site_dirs` and reads METADATA and RECORD in one batch.
DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs);

}  // namespace sitepatch::site

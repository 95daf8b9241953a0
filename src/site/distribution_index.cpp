// The distribution index, read per question. A GPU server's venv has 200 dist-infos and
// torch's RECORD alone is 1.25 MB: reading and parsing them all cost every command
// about 10x `python -c pass` (issue 11), and over ssh shipped them all. A question
// about a file reads only the RECORD rows that can name it; the metadata of
// the one distribution that claims it; a question about a name, the dist-infos whose
// folder name encodes it.
#include <algorithm>
#include <deque>
#include <mutex>
#include <tuple>

#include "sitepatch/host/host.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::site {
namespace {

std::string strip_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

/// "foo-1.0.dist-info" -> {"foo", "1.0"}: the fallback when METADATA is missing.
std::pair<std::string, std::string> from_folder_name(const std::string& dist_info) {
  std::string stem = dist_info.substr(0, dist_info.rfind('.'));
  size_t dash = stem.find('-');
  if (dash == std::string::npos) return {stem, ""};
  return {stem.substr(0, dash), stem.substr(dash + 1)};
}

bool usable(const host::FileData& f) { return f.exists && !f.is_dir; }

struct Kind {
  bool egg = false;       // .egg-info
  bool egg_file = false;  // a bare PKG-INFO named *.egg-info
};

Kind kind_of(const std::string& dist_info, bool is_dir) {
  Kind k;
  k.egg = util::ends_with(dist_info, ".egg-info");
  k.egg_file = k.egg && !is_dir;
  return k;
}

std::string base_of(const Distribution& d) { return d.site_dir + "/" + d.dist_info; }

// The files one distribution's metadata is read from, in the order `fill` expects.
std::vector<std::string> files_of(const Distribution& d, Kind k) {
  std::string base = base_of(d);
  if (!k.egg) return {base + "/METADATA", base + "/RECORD"};
  if (k.egg_file) return {base};
  return {base + "/PKG-INFO", base + "/installed-files.txt", base + "/SOURCES.txt", base + "/top_level.txt"};
}

// The lists that name a distribution's files (none for a bare PKG-INFO).
std::vector<std::string> lists_of(const Distribution& d, Kind k) {
  if (!k.egg) return {base_of(d) + "/RECORD"};
  if (k.egg_file) return {};
  return {base_of(d) + "/installed-files.txt", base_of(d) + "/SOURCES.txt"};
}

// The rows of `lists` (what lists_of asked for, maybe only some lines) as paths.
std::vector<RecordEntry> rows_of(const Distribution& d, Kind k, const host::FileData* lists) {
  if (!k.egg) return usable(lists[0]) ? parse_record(lists[0].content) : std::vector<RecordEntry>{};
  // importlib.metadata's order: what pip installed, else the sources it was built from.
  if (usable(lists[0])) return parse_installed_files(lists[0].content, d.dist_info);
  if (usable(lists[1])) return parse_record(lists[1].content);
  return {};
}

void fill(Distribution& d, Kind k, const host::FileData* files) {
  const host::FileData& metadata = files[0];
  if (usable(metadata)) std::tie(d.name, d.version) = parse_metadata(metadata.content);
  auto fallback = from_folder_name(d.dist_info);
  if (d.name.empty()) d.name = fallback.first;
  if (d.version.empty()) d.version = fallback.second;
  if (k.egg_file) {
    // Nothing lists its files: its import name is most often its own.
  } else {
    d.record = rows_of(d, k, files + 1);
    if (!k.egg) return;
    if (usable(files[3])) d.top_level = parse_top_level(files[3].content);
    if (!d.record.empty() || !d.top_level.empty()) return;
  }
  std::string guess = normalize_name(d.name);
  std::replace(guess.begin(), guess.end(), '-', '_');
  if (!guess.empty()) d.top_level.push_back(guess);
}

bool lists_path(const std::vector<RecordEntry>& rows, const std::string& path, const std::string& base) {
  for (auto& e : rows)
    if (util::ends_with(e.path, base) && normalize_record_path(e.path) == path) return true;
  return false;
}

}  // namespace

struct DistributionIndex::Lazy {
  host::Host* host = nullptr;  // nullptr: every distribution was add()ed, known in full
  std::vector<Kind> kinds;
  std::vector<bool> loaded;
  std::map<std::string, std::vector<size_t>> by_dir;  // site dir -> its distributions, in order
  // (site dir, path) -> per distribution of that dir: its rows that may name that path
  std::map<std::pair<std::string, std::string>, std::vector<std::vector<RecordEntry>>> rows;
  std::map<std::pair<std::string, std::string>, const Distribution*> owners;  // answers so far
  // A conda environment: conda-meta's records, and per (site dir, path) the one naming it
  std::string conda_prefix;
  std::vector<std::string> conda_records;
  std::map<std::pair<std::string, std::string>, size_t> conda_named;
  std::map<size_t, Distribution> conda_dists;  // by record; a map keeps pointers stable
  std::mutex mu;

  const Distribution* conda_owner(const std::string& dir, const std::string& path);
  const Distribution* conda_named_as(const std::string& normalized);
  const Distribution* conda_record(size_t r, const std::string& dir);

  void load(std::vector<Distribution>& dists, const std::vector<size_t>& which);
  void fetch_rows(std::vector<Distribution>& dists, const std::string& dir, const std::vector<std::string>& paths);
};

void DistributionIndex::Lazy::load(std::vector<Distribution>& dists, const std::vector<size_t>& which) {
  std::vector<size_t> unread, first;
  std::vector<std::string> paths;
  for (size_t i : which) {
    if (loaded[i]) continue;
    unread.push_back(i);
    first.push_back(paths.size());
    for (auto& p : files_of(dists[i], kinds[i])) paths.push_back(p);
  }
  if (unread.empty()) return;
  auto files = host->read(paths);
  for (size_t n = 0; n < unread.size(); ++n) {
    fill(dists[unread[n]], kinds[unread[n]], files.data() + first[n]);
    loaded[unread[n]] = true;
  }
}

namespace {

// "lib/python3.11/site-packages/" for a site dir inside the conda prefix, else "".
std::string conda_below(const std::string& prefix, const std::string& dir) {
  if (prefix.empty() || !util::starts_with(dir, prefix + "/")) return "";
  return dir.substr(prefix.size() + 1) + "/";
}

// A row names the file by its path as written, or by one that is not normalized ("./",
// "x/../", "//": rare outside egg-info's "../" lines); a quoted field doubles a '"'.
std::vector<std::string> needles_for(const std::string& path) {
  std::vector<std::string> needles = {path, "./", "//"};
  if (path.find('"') != std::string::npos) {
    std::string doubled;
    for (char c : path) doubled += c == '"' ? std::string("\"\"") : std::string(1, c);
    needles.push_back(doubled);
  }
  return needles;
}

}  // namespace

void DistributionIndex::Lazy::fetch_rows(std::vector<Distribution>& dists, const std::string& dir,
                                         const std::vector<std::string>& wanted) {
  std::vector<std::string> unread, needles;
  for (auto& path : wanted)
    if (!rows.count({dir, path}) && std::find(unread.begin(), unread.end(), path) == unread.end()) {
      unread.push_back(path);
      for (auto& n : needles_for(path)) needles.push_back(n);
    }
  if (unread.empty()) return;
  const std::vector<size_t>& in_dir = by_dir[dir];
  std::vector<std::string> paths;
  std::vector<size_t> first;
  for (size_t i : in_dir) {
    first.push_back(paths.size());
    if (!loaded[i])
      for (auto& p : lists_of(dists[i], kinds[i])) paths.push_back(p);
  }
  // conda's records name a file by its path in the prefix, quoted.
  size_t conda_first = paths.size();
  std::string below = conda_below(conda_prefix, dir);
  if (!below.empty() && !conda_records.empty()) {
    for (auto& r : conda_records) paths.push_back(conda_prefix + "/conda-meta/" + r);
    for (auto& path : unread) needles.push_back("\"" + below + path + "\"");
  }
  // Only the rows that can name one of the files cross over, in one read.
  auto files = paths.empty() ? std::vector<host::FileData>{} : host->read_lines(paths, needles);
  if (!below.empty())
    for (auto& path : unread)
      for (size_t r = 0; conda_first + r < files.size(); ++r)
        if (!host::lines_holding(files[conda_first + r].content, {"\"" + below + path + "\""}).empty()) {
          conda_named.emplace(std::make_pair(dir, path), r);
          break;
        }
  for (auto& path : unread) {
    std::string base = path.substr(path.rfind('/') + 1);
    auto mine = needles_for(path);
    std::vector<std::vector<RecordEntry>> out(in_dir.size());
    for (size_t n = 0; n < in_dir.size(); ++n) {
      size_t i = in_dir[n];
      if (loaded[i]) {
        for (auto& e : dists[i].record)
          if (util::ends_with(e.path, base)) out[n].push_back(e);
        continue;
      }
      size_t count = lists_of(dists[i], kinds[i]).size();
      if (count == 0) continue;
      std::vector<host::FileData> lists(files.begin() + first[n], files.begin() + first[n] + count);
      for (auto& f : lists) f.content = host::lines_holding(f.content, mine);
      out[n] = rows_of(dists[i], kinds[i], lists.data());
    }
    rows.emplace(std::make_pair(dir, path), std::move(out));
  }
}

const Distribution* DistributionIndex::Lazy::conda_record(size_t r, const std::string& dir) {
  auto made = conda_dists.find(r);
  if (made == conda_dists.end()) {
    Distribution d;
    std::tie(d.name, d.version) = parse_conda_record_name(conda_records[r]);
    d.site_dir = dir;
    d.conda_meta = "conda-meta/" + conda_records[r];
    made = conda_dists.emplace(r, std::move(d)).first;
  }
  if (made->second.site_dir.empty()) made->second.site_dir = dir;  // first made by a name lookup
  return &made->second;
}

const Distribution* DistributionIndex::Lazy::conda_owner(const std::string& dir, const std::string& path) {
  auto it = conda_named.find({dir, path});
  return it == conda_named.end() ? nullptr : conda_record(it->second, dir);
}

// A conda package with no dist-info is still installed, at conda's version: `requires:`
// sees it, and an upgrade of it is one.
const Distribution* DistributionIndex::Lazy::conda_named_as(const std::string& normalized) {
  for (size_t r = 0; r < conda_records.size(); ++r)
    if (normalize_name(parse_conda_record_name(conda_records[r]).first) == normalized)
      return conda_record(r, conda_dists.count(r) ? conda_dists.at(r).site_dir : "");
  return nullptr;
}

std::pair<std::string, std::string> parse_conda_record_name(std::string_view file) {
  std::string stem(file.substr(0, file.size() - (util::ends_with(file, ".json") ? 5 : 0)));
  size_t build = stem.rfind('-');
  if (build == std::string::npos || build == 0) return {stem, ""};
  size_t version = stem.rfind('-', build - 1);
  if (version == std::string::npos) return {stem.substr(0, build), stem.substr(build + 1)};
  return {stem.substr(0, version), stem.substr(version + 1, build - version - 1)};
}

DistributionIndex::DistributionIndex() : lazy_(std::make_unique<Lazy>()) {}
DistributionIndex::~DistributionIndex() = default;
DistributionIndex::DistributionIndex(DistributionIndex&&) noexcept = default;
DistributionIndex& DistributionIndex::operator=(DistributionIndex&&) noexcept = default;

void DistributionIndex::add(Distribution d) {
  d.site_dir = strip_slashes(d.site_dir);
  lazy_->by_dir[d.site_dir].push_back(dists_.size());
  lazy_->kinds.push_back(kind_of(d.dist_info, true));
  lazy_->loaded.push_back(true);
  lazy_->rows.clear();
  lazy_->owners.clear();
  dists_.push_back(std::move(d));
}

const Distribution* DistributionIndex::owner(const std::string& site_dir, const std::string& rel) const {
  std::string dir = strip_slashes(site_dir), path = normalize_record_path(rel);
  std::lock_guard<std::mutex> hold(lazy_->mu);
  auto key = std::make_pair(dir, path);
  if (auto it = lazy_->owners.find(key); it != lazy_->owners.end()) return it->second;
  auto& dists = const_cast<std::vector<Distribution>&>(dists_);
  const std::vector<size_t>& in_dir = lazy_->by_dir[dir];
  std::string base = path.substr(path.rfind('/') + 1);
  const Distribution* found = nullptr;
  // The first distribution to claim a file keeps it (dist-infos come sorted).
  lazy_->fetch_rows(dists, dir, {path});
  const auto& rows = lazy_->rows.at(key);
  for (size_t n = 0; n < in_dir.size() && !found; ++n)
    if (lists_path(rows[n], path, base)) {
      lazy_->load(dists, {in_dir[n]});
      found = &dists[in_dir[n]];
    }
  if (!found) found = lazy_->conda_owner(dir, path);
  if (!found) {
    // A distribution that lists no files owns its top-level packages whole: only an
    // egg-info can (top_level.txt, or its name), so only those are read in full.
    std::vector<size_t> eggs;
    for (size_t i : in_dir)
      if (lazy_->kinds[i].egg) eggs.push_back(i);
    lazy_->load(dists, eggs);
    std::string top = path.substr(0, path.find('/'));
    if (top == path && util::ends_with(top, ".py")) top.resize(top.size() - 3);
    for (size_t i : in_dir)
      if (std::find(dists[i].top_level.begin(), dists[i].top_level.end(), top) != dists[i].top_level.end()) {
        found = &dists[i];
        break;
      }
  }
  lazy_->owners.emplace(key, found);
  return found;
}

void DistributionIndex::prefetch(const std::vector<std::pair<std::string, std::string>>& files) const {
  std::map<std::string, std::vector<std::string>> by_dir;
  for (auto& [dir, rel] : files) by_dir[strip_slashes(dir)].push_back(normalize_record_path(rel));
  std::lock_guard<std::mutex> hold(lazy_->mu);
  for (auto& [dir, paths] : by_dir)
    lazy_->fetch_rows(const_cast<std::vector<Distribution>&>(dists_), dir, paths);
}

const Distribution* DistributionIndex::find(std::string_view name) const {
  std::string want = normalize_name(name);
  std::lock_guard<std::mutex> hold(lazy_->mu);
  auto& dists = const_cast<std::vector<Distribution>&>(dists_);
  // pip names the folder after the distribution: read those first, the rest only if
  // none of them is it.
  std::vector<size_t> named;
  for (size_t i = 0; i < dists.size(); ++i)
    if (lazy_->loaded[i] ? normalize_name(dists[i].name) == want
                         : normalize_name(from_folder_name(dists[i].dist_info).first) == want)
      named.push_back(i);
  lazy_->load(dists, named);
  for (size_t i : named)
    if (normalize_name(dists[i].name) == want) return &dists[i];
  std::vector<size_t> every(dists.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = i;
  lazy_->load(dists, every);
  for (auto& d : dists)
    if (normalize_name(d.name) == want) return &d;
  return lazy_->conda_named_as(want);
}

const std::vector<Distribution>& DistributionIndex::all() const {
  std::lock_guard<std::mutex> hold(lazy_->mu);
  std::vector<size_t> every(dists_.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = i;
  lazy_->load(const_cast<std::vector<Distribution>&>(dists_), every);
  return dists_;
}

DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs,
                                     const std::string& prefix) {
  DistributionIndex index;
  index.lazy_->host = &host;
  std::vector<std::string> dirs;
  for (auto& d : site_dirs) dirs.push_back(strip_slashes(d));
  std::vector<std::string> listed = dirs;
  if (!prefix.empty()) listed.push_back(strip_slashes(prefix) + "/conda-meta");
  auto listings = host.list_many(listed);  // one round trip; nothing is read until asked
  if (!prefix.empty()) {
    for (auto& entry : listings.back())
      if (!entry.is_dir && util::ends_with(entry.name, ".json")) index.lazy_->conda_records.push_back(entry.name);
    if (!index.lazy_->conda_records.empty()) index.lazy_->conda_prefix = strip_slashes(prefix);
  }
  for (size_t k = 0; k < dirs.size(); ++k)
    for (auto& entry : listings[k]) {
      bool dist_info = entry.is_dir && util::ends_with(entry.name, ".dist-info");
      if (!dist_info && !util::ends_with(entry.name, ".egg-info")) continue;
      Distribution d;
      d.site_dir = dirs[k];
      d.dist_info = entry.name;
      index.lazy_->by_dir[d.site_dir].push_back(index.dists_.size());
      index.lazy_->kinds.push_back(kind_of(entry.name, entry.is_dir));
      index.lazy_->loaded.push_back(false);
      index.dists_.push_back(std::move(d));
    }
  return index;
}

}  // namespace sitepatch::site

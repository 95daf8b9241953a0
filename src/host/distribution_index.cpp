// The distribution index, read per question. A GPU server's venv has 200 dist-infos and
// torch's RECORD alone is 1.25 MB: reading and parsing them all cost every command
// about 10x `python -c pass` (issue 11), and over ssh shipped them all. Each question is
// one Host::search, answered where the files are: a file's owner comes back as the
// RECORD rows that can name it and the headers of the dist-infos holding them; a name
// as the dist-infos whose folder name encodes it. Only `all` reads everything.
#include <algorithm>
#include <mutex>
#include <set>
#include <tuple>

#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::host {

using site::Distribution;
using site::normalize_name;
using site::normalize_record_path;
using site::parse_conda_record_name;
using site::parse_installed_files;
using site::parse_metadata;
using site::parse_record;
using site::parse_top_level;
using site::RecordEntry;

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

// What every search for distributions asks of an entry, by position: its file lists
// (a dist-info's RECORD; an egg-info's installed-files.txt, else SOURCES.txt), its
// headers (METADATA; PKG-INFO; a bare PKG-INFO file is the entry itself), top_level.txt.
const std::vector<std::string> kPatterns = {"*.dist-info", "*.egg-info"};
const std::vector<std::string> kLists = {"RECORD", "installed-files.txt", "SOURCES.txt"};
const std::vector<std::string> kHeads = {"METADATA", "PKG-INFO", ""};
const std::vector<std::string> kWholes = {"top_level.txt"};

host::EntryQuery dist_query(const std::string& dir, std::vector<std::string> patterns = kPatterns) {
  host::EntryQuery q;
  q.dirs = {dir};
  q.patterns = std::move(patterns);
  q.lists = kLists;
  q.heads = kHeads;
  q.wholes = kWholes;
  return q;
}

// A hit that is a distribution: a *.dist-info must be a folder.
bool is_distribution(const host::EntryHit& h) {
  return util::ends_with(h.name, ".egg-info") || (h.is_dir && util::ends_with(h.name, ".dist-info"));
}

// The rows of a hit's lists (maybe only some lines), importlib.metadata's way: what pip
// installed, else the sources an egg was built from.
std::vector<RecordEntry> rows_of(const host::EntryHit& h) {
  Kind k = kind_of(h.name, h.is_dir);
  if (!k.egg) return usable(h.lists[0]) ? parse_record(h.lists[0].content) : std::vector<RecordEntry>{};
  if (k.egg_file) return {};
  if (usable(h.lists[1])) return parse_installed_files(h.lists[1].content, h.name);
  if (usable(h.lists[2])) return parse_record(h.lists[2].content);
  return {};
}

// Name, version and (an egg-info) the top-level names it owns whole.
Distribution describe(const std::string& dir, const host::EntryHit& h) {
  Kind k = kind_of(h.name, h.is_dir);
  Distribution d;
  d.site_dir = dir;
  d.dist_info = h.name;
  const host::FileData& metadata = !k.egg ? h.heads[0] : k.egg_file ? h.heads[2] : h.heads[1];
  if (usable(metadata)) std::tie(d.name, d.version) = parse_metadata(metadata.content);
  auto fallback = from_folder_name(d.dist_info);
  if (d.name.empty()) d.name = fallback.first;
  if (d.version.empty()) d.version = fallback.second;
  if (!k.egg) return d;
  bool lists_files = !k.egg_file && (usable(h.lists[1]) || usable(h.lists[2]));
  if (!k.egg_file && usable(h.wholes[0])) d.top_level = parse_top_level(h.wholes[0].content);
  if (lists_files || !d.top_level.empty()) return d;
  // Nothing lists its files: its import name is most often its own.
  std::string guess = normalize_name(d.name);
  std::replace(guess.begin(), guess.end(), '-', '_');
  if (!guess.empty()) d.top_level.push_back(guess);
  return d;
}

bool lists_path(const std::vector<RecordEntry>& rows, const std::string& path, const std::string& base) {
  for (auto& e : rows)
    if (util::ends_with(e.path, base) && normalize_record_path(e.path) == path) return true;
  return false;
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

// "lib/python3.11/site-packages/" for a site dir inside the conda prefix, else "".
std::string conda_below(const std::string& prefix, const std::string& dir) {
  if (prefix.empty() || !util::starts_with(dir, prefix + "/")) return "";
  return dir.substr(prefix.size() + 1) + "/";
}

// Folder names pip and setuptools give a distribution: the name with each run of
// "-_." as one of them, any case ("Flask_Login-0.6.dist-info" for flask-login).
std::vector<std::string> patterns_for(const std::string& normalized) {
  std::string stem;
  for (char c : normalized) {
    if (c == '[' || c == ']' || c == '*' || c == '?' || c == '\\') return {};  // no such name
    stem += c == '-' ? std::string("[-_.]") : std::string(1, c);
  }
  return {stem + "-*.dist-info", stem + "-*.egg-info", stem + ".dist-info", stem + ".egg-info"};
}

}  // namespace

struct DistributionIndex::Lazy {
  host::Host* host = nullptr;  // nullptr: every distribution was add()ed, known in full
  std::vector<std::string> dirs;
  std::string conda_prefix;
  std::map<std::pair<std::string, std::string>, Distribution*> by_entry;  // (site dir, dist_info)
  // (site dir, path) -> the distributions whose lists hold a row naming it, folder order
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<Distribution*, std::vector<RecordEntry>>>> rows;
  std::map<std::pair<std::string, std::string>, std::string> conda_named;  // -> the record naming it
  std::map<std::string, std::vector<Distribution*>> eggs;  // site dir -> its egg-infos, once asked
  std::map<std::pair<std::string, std::string>, const Distribution*> owners;  // answers so far
  std::map<std::string, const Distribution*> names;                           // find()'s answers
  std::set<const Distribution*> full;  // record read in full
  bool all_read = false;
  std::mutex mu;

  Distribution* keep(std::deque<Distribution>& known, Distribution d);
  Distribution* conda_dist(std::deque<Distribution>& known, const std::string& record, const std::string& dir);
  void ask_rows(std::deque<Distribution>& known, const std::map<std::string, std::vector<std::string>>& wanted);
  void ask_eggs(std::deque<Distribution>& known, const std::string& dir);
};

Distribution* DistributionIndex::Lazy::keep(std::deque<Distribution>& known, Distribution d) {
  // A conda record is one package whichever question found it first.
  auto key = d.conda_meta.empty() ? std::make_pair(d.site_dir, d.dist_info) : std::make_pair(std::string(), d.conda_meta);
  if (auto it = by_entry.find(key); it != by_entry.end()) {
    if (it->second->site_dir.empty()) it->second->site_dir = d.site_dir;
    return it->second;
  }
  known.push_back(std::move(d));
  by_entry.emplace(key, &known.back());
  return &known.back();
}

Distribution* DistributionIndex::Lazy::conda_dist(std::deque<Distribution>& known, const std::string& record,
                                                   const std::string& dir) {
  Distribution d;
  std::tie(d.name, d.version) = parse_conda_record_name(record);
  d.site_dir = dir;
  d.conda_meta = "conda-meta/" + record;
  return keep(known, std::move(d));
}

void DistributionIndex::Lazy::ask_rows(std::deque<Distribution>& known,
                                       const std::map<std::string, std::vector<std::string>>& wanted) {
  // One search for every folder's questions: a query per folder, and one per folder
  // for conda's records, which name a file by its path in the prefix, quoted.
  std::vector<host::EntryQuery> queries;
  std::vector<std::pair<std::string, std::vector<std::string>>> asked;  // per dist query
  std::vector<int> conda_query;                                         // its index, or -1
  for (auto& [dir, paths] : wanted) {
    std::vector<std::string> unread;
    for (auto& p : paths)
      if (!rows.count({dir, p}) && std::find(unread.begin(), unread.end(), p) == unread.end()) unread.push_back(p);
    if (unread.empty()) continue;
    host::EntryQuery q = dist_query(dir);
    for (auto& p : unread)
      for (auto& n : needles_for(p)) q.needles.push_back(n);
    queries.push_back(std::move(q));
    asked.emplace_back(dir, unread);
    std::string below = conda_below(conda_prefix, dir);
    if (below.empty()) {
      conda_query.push_back(-1);
      continue;
    }
    host::EntryQuery c;
    c.dirs = {conda_prefix + "/conda-meta"};
    c.patterns = {"*.json"};
    c.lists = {""};
    for (auto& p : unread) c.needles.push_back("\"" + below + p + "\"");
    conda_query.push_back(int(queries.size()));
    queries.push_back(std::move(c));
  }
  if (queries.empty()) return;
  auto answers = host->search(queries);
  size_t qi = 0;
  for (size_t a = 0; a < asked.size(); ++a, ++qi) {
    auto& [dir, unread] = asked[a];
    std::vector<std::pair<Distribution*, std::vector<RecordEntry>>> found;  // each hit, all its rows
    for (auto& h : answers[qi])
      if (is_distribution(h)) found.emplace_back(keep(known, describe(dir, h)), rows_of(h));
    for (auto& path : unread) {
      std::string base = path.substr(path.rfind('/') + 1);
      auto& mine = rows[{dir, path}];
      for (auto& [d, all_rows] : found) {
        std::vector<RecordEntry> kept;
        for (auto& r : all_rows)
          if (util::ends_with(r.path, base)) kept.push_back(r);
        if (!kept.empty()) mine.emplace_back(d, std::move(kept));
      }
    }
    if (conda_query[a] < 0) continue;
    ++qi;
    std::string below = conda_below(conda_prefix, dir);
    for (auto& path : unread)
      for (auto& h : answers[qi])
        if (!host::lines_holding(h.lists[0].content, {"\"" + below + path + "\""}).empty()) {
          conda_named.emplace(std::make_pair(dir, path), h.name);
          break;
        }
  }
}

void DistributionIndex::Lazy::ask_eggs(std::deque<Distribution>& known, const std::string& dir) {
  if (eggs.count(dir)) return;
  // Only an egg-info can own a package whole (top_level.txt, or its name): every one of
  // them, its files only looked up.
  auto q = dist_query(dir, {"*.egg-info"});
  auto& mine = eggs[dir];
  auto answers = host->search({q});
  for (auto& h : answers[0])
    if (is_distribution(h)) mine.push_back(keep(known, describe(dir, h)));
}

DistributionIndex::DistributionIndex() : lazy_(std::make_unique<Lazy>()) {}
DistributionIndex::~DistributionIndex() = default;
DistributionIndex::DistributionIndex(DistributionIndex&&) noexcept = default;
DistributionIndex& DistributionIndex::operator=(DistributionIndex&&) noexcept = default;

void DistributionIndex::add(Distribution d) {
  d.site_dir = strip_slashes(d.site_dir);
  known_.push_back(std::move(d));
  lazy_->full.insert(&known_.back());
  all_.push_back(&known_.back());
  lazy_->owners.clear();
  lazy_->names.clear();
}

namespace {

// The owner among distributions known in full (add()ed): the first claimant wins.
const Distribution* owner_among(const std::deque<Distribution>& known, const std::string& dir,
                                const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  for (auto& d : known)
    if (d.site_dir == dir && lists_path(d.record, path, base)) return &d;
  std::string top = path.substr(0, path.find('/'));
  if (top == path && util::ends_with(top, ".py")) top.resize(top.size() - 3);
  for (auto& d : known)
    if (d.site_dir == dir && std::find(d.top_level.begin(), d.top_level.end(), top) != d.top_level.end()) return &d;
  return nullptr;
}

}  // namespace

const Distribution* DistributionIndex::owner(const std::string& site_dir, const std::string& rel) const {
  std::string dir = strip_slashes(site_dir), path = normalize_record_path(rel);
  std::lock_guard<std::mutex> hold(lazy_->mu);
  auto key = std::make_pair(dir, path);
  if (auto it = lazy_->owners.find(key); it != lazy_->owners.end()) return it->second;
  auto& known = const_cast<std::deque<Distribution>&>(known_);
  if (!lazy_->host) return lazy_->owners[key] = owner_among(known, dir, path);
  const Distribution* found = nullptr;
  // The first distribution to claim a file keeps it (hits come sorted).
  lazy_->ask_rows(known, {{dir, {path}}});
  std::string base = path.substr(path.rfind('/') + 1);
  for (auto& [d, rows] : lazy_->rows.at(key))
    if (lists_path(rows, path, base)) {
      found = d;
      break;
    }
  if (!found)
    if (auto c = lazy_->conda_named.find(key); c != lazy_->conda_named.end())
      found = lazy_->conda_dist(known, c->second, dir);
  if (!found) {
    lazy_->ask_eggs(known, dir);
    std::string top = path.substr(0, path.find('/'));
    if (top == path && util::ends_with(top, ".py")) top.resize(top.size() - 3);
    for (Distribution* d : lazy_->eggs[dir])
      if (std::find(d->top_level.begin(), d->top_level.end(), top) != d->top_level.end()) {
        found = d;
        break;
      }
  }
  lazy_->owners.emplace(key, found);
  return found;
}

void DistributionIndex::prefetch(const std::vector<std::pair<std::string, std::string>>& files) const {
  if (!lazy_->host) return;
  std::map<std::string, std::vector<std::string>> by_dir;
  for (auto& [dir, rel] : files) by_dir[strip_slashes(dir)].push_back(normalize_record_path(rel));
  std::lock_guard<std::mutex> hold(lazy_->mu);
  lazy_->ask_rows(const_cast<std::deque<Distribution>&>(known_), by_dir);
}

const Distribution* DistributionIndex::find(std::string_view name) const {
  std::string want = normalize_name(name);
  std::lock_guard<std::mutex> hold(lazy_->mu);
  if (auto it = lazy_->names.find(want); it != lazy_->names.end()) return it->second;
  auto& known = const_cast<std::deque<Distribution>&>(known_);
  const Distribution* found = nullptr;
  auto named = [&](const Distribution& d) { return d.conda_meta.empty() && normalize_name(d.name) == want; };
  if (!lazy_->host) {
    for (auto& d : known)
      if (named(d)) return lazy_->names[want] = &d;
    return lazy_->names[want] = nullptr;
  }
  // pip names the folder after the distribution: ask for those, and conda's records of
  // that name, in one search; everything else only if none of them is it.
  auto patterns = patterns_for(want);
  std::vector<host::EntryQuery> queries;
  bool conda = !lazy_->conda_prefix.empty() && !patterns.empty();
  if (!patterns.empty()) {
    for (auto& dir : lazy_->dirs) queries.push_back(dist_query(dir, patterns));
    if (conda) {
      host::EntryQuery c;
      c.dirs = {lazy_->conda_prefix + "/conda-meta"};
      c.patterns = {patterns[0].substr(0, patterns[0].size() - std::string("-*.dist-info").size()) + "-*.json"};
      queries.push_back(std::move(c));
    }
  }
  auto answers = queries.empty() ? std::vector<std::vector<host::EntryHit>>{} : lazy_->host->search(queries);
  for (size_t k = 0; k < lazy_->dirs.size() && k < answers.size() && !found; ++k)
    for (auto& h : answers[k])
      if (is_distribution(h)) {
        Distribution* d = lazy_->keep(known, describe(lazy_->dirs[k], h));
        if (named(*d)) {
          found = d;
          break;
        }
      }
  if (!found) found = named_anywhere(want);
  // A conda package with no dist-info is still installed, at conda's version: `requires:`
  // sees it, and an upgrade of it is one.
  if (!found && conda)
    for (auto& h : answers.back())
      if (normalize_name(parse_conda_record_name(h.name).first) == want) {
        found = lazy_->conda_dist(known, h.name, "");
        break;
      }
  return lazy_->names[want] = found;
}

const Distribution* DistributionIndex::named_anywhere(const std::string& want) const {
  // A folder not named after its distribution (rare): every one's Name line, then the
  // headers of the one that has it.
  auto& known = const_cast<std::deque<Distribution>&>(known_);
  std::vector<host::EntryQuery> queries;
  for (auto& dir : lazy_->dirs) {
    host::EntryQuery q;
    q.dirs = {dir};
    q.patterns = kPatterns;
    q.lists = {"METADATA", "PKG-INFO", ""};
    q.needles = {"Name:"};
    queries.push_back(std::move(q));
  }
  auto answers = lazy_->host->search(queries);
  for (size_t k = 0; k < answers.size(); ++k)
    for (auto& h : answers[k]) {
      if (!is_distribution(h)) continue;
      std::string text = h.lists[0].content + h.lists[1].content + h.lists[2].content;
      if (normalize_name(parse_metadata(text).first) != want) continue;
      // The entry by its exact name ('[' cannot start a glob class in a name pip wrote).
      std::string exact;
      for (char c : h.name) exact += (c == '[' || c == '*' || c == '?') ? std::string("?") : std::string(1, c);
      auto one = lazy_->host->search({dist_query(lazy_->dirs[k], {exact})});
      for (auto& full : one[0])
        if (full.name == h.name && is_distribution(full)) return lazy_->keep(known, describe(lazy_->dirs[k], full));
    }
  return nullptr;
}

const std::vector<RecordEntry>& DistributionIndex::files(const Distribution& d) const {
  std::lock_guard<std::mutex> hold(lazy_->mu);
  if (!lazy_->host || lazy_->full.count(&d) || !d.conda_meta.empty()) return d.record;
  std::string base = d.site_dir + "/" + d.dist_info;
  // In kLists' order, only the ones its kind has; a bare PKG-INFO file reads as none.
  host::EntryHit h{0, d.dist_info, true, std::vector<host::FileData>(kLists.size()), {}, {}};
  bool egg = kind_of(d.dist_info, true).egg;
  std::vector<std::string> paths;
  for (size_t i = egg ? 1 : 0; i < (egg ? kLists.size() : 1); ++i) paths.push_back(base + "/" + kLists[i]);
  auto read = lazy_->host->read(paths);
  std::move(read.begin(), read.end(), h.lists.begin() + (egg ? 1 : 0));
  const_cast<Distribution&>(d).record = rows_of(h);
  lazy_->full.insert(&d);
  return d.record;
}

void DistributionIndex::read_all() const {
  if (lazy_->all_read || !lazy_->host) return;
  auto& known = const_cast<std::deque<Distribution>&>(known_);
  // Per folder, two questions in one search: every entry (headers, lists looked up),
  // and the lists of those that have them, whole.
  std::vector<host::EntryQuery> queries;
  for (auto& dir : lazy_->dirs) {
    queries.push_back(dist_query(dir));
    auto q = dist_query(dir);
    q.needles = {""};
    q.heads.clear();
    q.wholes.clear();
    queries.push_back(std::move(q));
  }
  auto answers = lazy_->host->search(queries);
  auto& every = const_cast<std::vector<const Distribution*>&>(all_);
  for (size_t k = 0; k < lazy_->dirs.size(); ++k) {
    std::map<std::string, const host::EntryHit*> listed;
    for (auto& h : answers[2 * k + 1]) listed[h.name] = &h;
    for (auto& h : answers[2 * k]) {
      if (!is_distribution(h)) continue;
      Distribution* d = lazy_->keep(known, describe(lazy_->dirs[k], h));
      if (!lazy_->full.count(d)) {
        auto it = listed.find(h.name);
        if (it != listed.end()) d->record = rows_of(*it->second);
        lazy_->full.insert(d);
      }
      every.push_back(d);
    }
  }
  lazy_->all_read = true;
}

const std::vector<const Distribution*>& DistributionIndex::all() const {
  std::lock_guard<std::mutex> hold(lazy_->mu);
  read_all();
  return all_;
}

DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs,
                                     const std::string& prefix) {
  DistributionIndex index;
  index.lazy_->host = &host;
  for (auto& d : site_dirs) index.lazy_->dirs.push_back(strip_slashes(d));
  if (!prefix.empty()) index.lazy_->conda_prefix = strip_slashes(prefix);
  return index;
}

}  // namespace sitepatch::host

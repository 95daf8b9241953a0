#include "sitepatch/site/distribution.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "sitepatch/host/host.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::site {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string strip_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

/// CSV rows as RFC 4180 (Python's csv module) writes them: "," separated, fields in
/// double quotes may hold commas, newlines and "" for a quote.
std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  auto end_row = [&] {
    if (any || !field.empty() || !row.empty()) {
      row.push_back(std::move(field));
      rows.push_back(std::move(row));
    }
    row.clear();
    field.clear();
    any = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n') {
      end_row();
    } else if (c != '\r') {
      field += c;
    }
  }
  end_row();
  return rows;
}

/// "foo-1.0.dist-info" -> {"foo", "1.0"}: the fallback when METADATA is missing.
std::pair<std::string, std::string> from_folder_name(const std::string& dist_info) {
  std::string stem = dist_info.substr(0, dist_info.rfind('.'));
  size_t dash = stem.find('-');
  if (dash == std::string::npos) return {stem, ""};
  return {stem.substr(0, dash), stem.substr(dash + 1)};
}

}  // namespace

std::string normalize_name(std::string_view name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string normalize_record_path(std::string_view rel) {
  std::vector<std::string> out;
  for (std::string& seg : util::split(rel, '/')) {
    if (seg.empty() || seg == ".") continue;
    if (seg == ".." && !out.empty() && out.back() != "..")
      out.pop_back();
    else
      out.push_back(std::move(seg));
  }
  return util::join(out, "/");
}

std::pair<std::string, std::string> parse_metadata(std::string_view text) {
  std::string name, version;
  for (const std::string& raw : util::split(text, '\n')) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // the body (long description) starts here
    if (line[0] == ' ' || line[0] == '\t') continue;  // continuation of a header
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = lower(util::trim(line.substr(0, colon)));
    std::string value = util::trim(line.substr(colon + 1));
    if (key == "name" && name.empty()) name = value;
    if (key == "version" && version.empty()) version = value;
  }
  return {name, version};
}

std::vector<RecordEntry> parse_record(std::string_view text) {
  std::vector<RecordEntry> out;
  for (auto& row : parse_csv(text)) {
    if (row.empty() || row[0].empty()) continue;
    RecordEntry e;
    e.path = row[0];
    if (row.size() > 1) e.hash = row[1];
    if (row.size() > 2) e.size = row[2];
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<RecordEntry> parse_installed_files(std::string_view text, std::string_view egg_info) {
  std::vector<RecordEntry> out;
  for (const std::string& raw : util::split(text, '\n')) {
    std::string line = util::trim(raw);
    if (line.empty()) continue;
    std::string rel = normalize_record_path(std::string(egg_info) + "/" + line);
    if (!rel.empty() && !util::starts_with(rel, "..")) out.push_back({rel, "", ""});
  }
  return out;
}

std::vector<std::string> parse_top_level(std::string_view text) {
  std::vector<std::string> out;
  for (const std::string& raw : util::split(text, '\n')) {
    std::string name = util::trim(raw);
    if (!name.empty() && name.find('/') == std::string::npos) out.push_back(name);
  }
  return out;
}

void DistributionIndex::add(Distribution d) {
  d.site_dir = strip_slashes(d.site_dir);
  size_t index = dists_.size();
  for (auto& e : d.record) {
    // The first distribution to claim a file keeps it (dist-infos come sorted).
    owner_.emplace(std::make_pair(d.site_dir, normalize_record_path(e.path)), index);
  }
  for (auto& top : d.top_level) top_owner_.emplace(std::make_pair(d.site_dir, top), index);
  dists_.push_back(std::move(d));
}

const Distribution* DistributionIndex::owner(const std::string& site_dir, const std::string& rel) const {
  std::string dir = strip_slashes(site_dir), path = normalize_record_path(rel);
  auto it = owner_.find({dir, path});
  if (it != owner_.end()) return &dists_[it->second];
  // A distribution that lists no files owns its top-level packages whole.
  std::string top = path.substr(0, path.find('/'));
  if (top == path && util::ends_with(top, ".py")) top.resize(top.size() - 3);
  auto t = top_owner_.find({dir, top});
  return t == top_owner_.end() ? nullptr : &dists_[t->second];
}

const Distribution* DistributionIndex::find(std::string_view name) const {
  std::string want = normalize_name(name);
  for (auto& d : dists_)
    if (normalize_name(d.name) == want) return &d;
  return nullptr;
}

namespace {

// The files one distribution's metadata is read from, in the order `fill` expects.
struct Wanted {
  Distribution d;
  bool egg = false;       // .egg-info
  bool egg_file = false;  // a bare PKG-INFO named *.egg-info
  size_t first = 0;       // index of its first path in the batch
};

std::vector<std::string> files_of(const Wanted& w) {
  std::string base = w.d.site_dir + "/" + w.d.dist_info;
  if (!w.egg) return {base + "/METADATA", base + "/RECORD"};
  if (w.egg_file) return {base};
  return {base + "/PKG-INFO", base + "/installed-files.txt", base + "/SOURCES.txt", base + "/top_level.txt"};
}

bool usable(const host::FileData& f) { return f.exists && !f.is_dir; }

void fill(Wanted& w, const std::vector<host::FileData>& files) {
  Distribution& d = w.d;
  const host::FileData& metadata = files.at(w.first);
  if (usable(metadata)) std::tie(d.name, d.version) = parse_metadata(metadata.content);
  auto fallback = from_folder_name(d.dist_info);
  if (d.name.empty()) d.name = fallback.first;
  if (d.version.empty()) d.version = fallback.second;
  if (!w.egg) {
    if (usable(files.at(w.first + 1))) d.record = parse_record(files.at(w.first + 1).content);
    return;
  }
  if (!w.egg_file) {
    const auto &installed = files.at(w.first + 1), &sources = files.at(w.first + 2), &top = files.at(w.first + 3);
    // importlib.metadata's order: what pip installed, else the sources it was built from.
    if (usable(installed)) d.record = parse_installed_files(installed.content, d.dist_info);
    else if (usable(sources)) d.record = parse_record(sources.content);
    if (usable(top)) d.top_level = parse_top_level(top.content);
    if (!d.record.empty() || !d.top_level.empty()) return;
  }
  // Nothing lists its files: its import name is most often its own.
  std::string guess = normalize_name(d.name);
  std::replace(guess.begin(), guess.end(), '-', '_');
  if (!guess.empty()) d.top_level.push_back(guess);
}

}  // namespace

DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs) {
  // Find every dist-info and egg-info first, then fetch their files in one read.
  std::vector<Wanted> found;
  std::vector<std::string> paths;
  for (const std::string& raw_dir : site_dirs) {
    std::string dir = strip_slashes(raw_dir);
    for (auto& entry : host.list(dir)) {
      bool dist_info = entry.is_dir && util::ends_with(entry.name, ".dist-info");
      bool egg = util::ends_with(entry.name, ".egg-info");
      if (!dist_info && !egg) continue;
      Wanted w;
      w.d.site_dir = dir;
      w.d.dist_info = entry.name;
      w.egg = egg;
      w.egg_file = egg && !entry.is_dir;
      w.first = paths.size();
      for (auto& p : files_of(w)) paths.push_back(p);
      found.push_back(std::move(w));
    }
  }
  DistributionIndex index;
  if (found.empty()) return index;
  std::vector<host::FileData> files = host.read(paths);
  for (auto& w : found) {
    fill(w, files);
    index.add(std::move(w.d));
  }
  return index;
}

}  // namespace sitepatch::site

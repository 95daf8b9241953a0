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
  std::string stem = dist_info.substr(0, dist_info.size() - std::string(".dist-info").size());
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

void DistributionIndex::add(Distribution d) {
  d.site_dir = strip_slashes(d.site_dir);
  size_t index = dists_.size();
  for (auto& e : d.record) {
    // The first distribution to claim a file keeps it (dist-infos come sorted).
    owner_.emplace(std::make_pair(d.site_dir, normalize_record_path(e.path)), index);
  }
  dists_.push_back(std::move(d));
}

const Distribution* DistributionIndex::owner(const std::string& site_dir, const std::string& rel) const {
  auto it = owner_.find({strip_slashes(site_dir), normalize_record_path(rel)});
  return it == owner_.end() ? nullptr : &dists_[it->second];
}

const Distribution* DistributionIndex::find(std::string_view name) const {
  std::string want = normalize_name(name);
  for (auto& d : dists_)
    if (normalize_name(d.name) == want) return &d;
  return nullptr;
}

DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs) {
  // Find every dist-info first, then fetch all METADATA and RECORD files in one read.
  std::vector<Distribution> found;
  std::vector<std::string> paths;
  for (const std::string& raw_dir : site_dirs) {
    std::string dir = strip_slashes(raw_dir);
    for (auto& entry : host.list(dir)) {
      if (!entry.is_dir || !util::ends_with(entry.name, ".dist-info")) continue;
      Distribution d;
      d.site_dir = dir;
      d.dist_info = entry.name;
      paths.push_back(dir + "/" + entry.name + "/METADATA");
      paths.push_back(dir + "/" + entry.name + "/RECORD");
      found.push_back(std::move(d));
    }
  }
  DistributionIndex index;
  if (found.empty()) return index;
  std::vector<host::FileData> files = host.read(paths);
  for (size_t i = 0; i < found.size(); ++i) {
    Distribution& d = found[i];
    const host::FileData& metadata = files.at(2 * i);
    const host::FileData& record = files.at(2 * i + 1);
    if (metadata.exists && !metadata.is_dir) std::tie(d.name, d.version) = parse_metadata(metadata.content);
    auto fallback = from_folder_name(d.dist_info);
    if (d.name.empty()) d.name = fallback.first;
    if (d.version.empty()) d.version = fallback.second;
    if (record.exists && !record.is_dir) d.record = parse_record(record.content);
    index.add(std::move(d));
  }
  return index;
}

}  // namespace sitepatch::site

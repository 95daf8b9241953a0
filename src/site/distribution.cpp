#include "sitepatch/site/distribution.hpp"

#include <algorithm>
#include <cctype>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::site {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
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
  // A wheel's METADATA is anyone's text, printed by every command that names the
  // distribution: escaped here, once (a Version with ESC reached root's terminal).
  // Nothing escaped is a PEP 440 version, so no recipe requires it.
  return {util::printable(name), util::printable(version)};
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

std::pair<std::string, std::string> parse_conda_record_name(std::string_view file) {
  std::string stem = util::printable(file.substr(0, file.size() - (util::ends_with(file, ".json") ? 5 : 0)));
  size_t build = stem.rfind('-');
  if (build == std::string::npos || build == 0) return {stem, ""};
  size_t version = stem.rfind('-', build - 1);
  if (version == std::string::npos) return {stem.substr(0, build), stem.substr(build + 1)};
  return {stem.substr(0, version), stem.substr(version + 1, build - version - 1)};
}

}  // namespace sitepatch::site

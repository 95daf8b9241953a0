// pip's RECORD kept true: a patched file's row carries the hash and size of the bytes
// now in it, as importlib.metadata users and security scanners check them; a rollback
// computes pip's own row back from pip's own bytes. The RECORD goes in the same
// all-or-nothing write as the files, compare-and-swap on what was read.
#include <map>

#include "engine/internal.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {
namespace {

// The first CSV field of a RECORD row, unquoted, and where the rest begins.
std::pair<std::string, size_t> first_field(const std::string& line) {
  std::string out;
  if (line.empty() || line[0] != '"') {
    size_t comma = line.find(',');
    return {line.substr(0, comma), comma == std::string::npos ? line.size() : comma};
  }
  size_t i = 1;
  for (; i < line.size(); ++i) {
    if (line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out += '"';
      ++i;
    } else if (line[i] == '"') {
      ++i;
      break;
    } else {
      out += line[i];
    }
  }
  return {out, i};
}

// `text` with the rows of `now` (normalized path -> bytes) rewritten; the path as pip
// wrote it is kept.
std::string rewritten(const std::string& text, const std::map<std::string, const std::string*>& now) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl;
    std::string line = text.substr(pos, end - pos);
    std::string eol = nl == std::string::npos ? "" : "\n";
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
      eol = "\r" + eol;
    }
    auto [path, rest] = first_field(line);
    auto it = now.find(site::normalize_record_path(path));
    if (it != now.end())
      line = line.substr(0, rest) + ",sha256=" + util::sha256_record(*it->second) + "," +
             std::to_string(it->second->size());
    out += line + eol;
    pos = end + (nl == std::string::npos ? 0 : 1);
  }
  return out;
}

// RECORD path -> (its site folder, the changed files it lists)
using ByRecord = std::map<std::string, std::pair<std::string, std::map<std::string, const std::string*>>>;

ByRecord by_record_of(Session& s, const std::vector<FileChange>& changes) {
  ByRecord by_record;
  std::vector<std::pair<std::string, std::string>> files;
  for (auto& fc : changes) files.emplace_back(fc.site_dir, fc.rel);
  s.distributions().prefetch(files);  // every owner in one round trip
  for (auto& fc : changes) {
    const site::Distribution* d = s.distributions().owner(fc.site_dir, fc.rel);
    if (!d || !util::ends_with(d->dist_info, ".dist-info")) continue;
    auto& entry = by_record[d->site_dir + "/" + d->dist_info + "/RECORD"];
    entry.first = d->site_dir;
    entry.second[site::normalize_record_path(fc.rel)] = &fc.new_text;
  }
  return by_record;
}

}  // namespace

std::vector<std::string> record_paths(Session& s, const std::vector<FileChange>& changes) {
  std::vector<std::string> paths;
  for (auto& [path, _] : by_record_of(s, changes)) paths.push_back(path);
  return paths;
}

std::vector<host::WriteRequest> record_updates(Session& s, const std::vector<FileChange>& changes,
                                               const std::vector<host::FileData>& records) {
  auto by_record = by_record_of(s, changes);
  std::vector<host::WriteRequest> out;
  for (auto& f : records) {
    auto it = by_record.find(f.path);
    if (!f.exists || f.is_dir || it == by_record.end()) continue;
    auto& [site, now] = it->second;
    std::string text = rewritten(f.content, now);
    if (text != f.content) out.push_back({f.path, text, util::sha256_hex(f.content), site});
  }
  return out;
}

std::vector<host::WriteRequest> record_updates(Session& s, const std::vector<FileChange>& changes) {
  auto paths = record_paths(s, changes);
  if (paths.empty()) return {};
  return record_updates(s, changes, s.host.read(paths));
}

std::vector<std::string> add_sidecars(Session& s, const std::vector<FileChange>& changes,
                                      const std::vector<store::PatchRecord>& after,
                                      std::vector<host::WriteRequest>& writes) {
  auto records = record_paths(s, changes), notes = marker_paths(s, after);
  std::vector<std::string> paths = records;
  paths.insert(paths.end(), notes.begin(), notes.end());
  paths.push_back(conda_meta_dir(s));  // whether this is a conda environment
  auto read = s.host.read(paths);  // one round trip for all three
  bool conda = read.back().exists && read.back().is_dir;
  read.pop_back();
  std::vector<host::FileData> read_notes(read.begin() + long(records.size()), read.end());
  read.resize(records.size());
  auto rows = record_updates(s, changes, read);
  writes.insert(writes.end(), rows.begin(), rows.end());
  if (conda) {
    auto hashes = conda_updates(s, changes);
    writes.insert(writes.end(), hashes.begin(), hashes.end());
  }
  auto marks = markers_for(s, after, read_notes);
  writes.insert(writes.end(), marks.write.begin(), marks.write.end());
  return marks.remove;
}

}  // namespace sitepatch::engine::detail

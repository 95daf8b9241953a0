// conda's record kept true, as pip's RECORD is: conda-meta/<package>.json lists each
// file with `sha256_in_prefix`, the hash of the bytes in the environment, which
// `conda doctor` compares with the file. A patched file's entry gets the hash of its new
// bytes; a rollback computes it back from pip's (or conda's) own bytes. The record is
// rewritten in place, byte for byte but for that hash, where the hash is found once.
#include <set>

#include <nlohmann/json.hpp>

#include "engine/internal.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

namespace {

// The changed files by their path in the prefix, as conda names them.
std::map<std::string, const FileChange*> by_prefix_path(const Session& s, const std::vector<FileChange>& changes) {
  std::map<std::string, const FileChange*> out;
  for (auto& fc : changes) {
    if (fc.site_dir == s.env.prefix) out[fc.rel] = &fc;
    else if (util::starts_with(fc.site_dir, s.env.prefix + "/"))
      out[fc.site_dir.substr(s.env.prefix.size() + 1) + "/" + fc.rel] = &fc;
  }
  return out;
}

// `text` (a conda-meta record) with the hashes of `changed` rewritten; `text` when it
// lists none of them with a hash.
std::string rehashed(const std::string& text, const std::map<std::string, const FileChange*>& changed) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("paths_data") || !doc["paths_data"].is_object()) return text;
  auto& paths = doc["paths_data"]["paths"];
  if (!paths.is_array()) return text;
  std::string out = text;
  bool whole = false;  // a hash found more than once: the record is written anew
  for (auto& entry : paths) {
    if (!entry.is_object() || !entry.contains("_path") || !entry["_path"].is_string() ||
        !entry.contains("sha256_in_prefix") || !entry["sha256_in_prefix"].is_string())
      continue;
    auto it = changed.find(entry["_path"].get<std::string>());
    if (it == changed.end()) continue;
    std::string old_hash = entry["sha256_in_prefix"], new_hash = util::sha256_hex(it->second->new_text);
    if (old_hash == new_hash) continue;
    entry["sha256_in_prefix"] = new_hash;
    std::string field = "\"sha256_in_prefix\": \"" + old_hash + "\"";
    size_t at = out.find(field);
    if (at == std::string::npos || out.find(field, at + 1) != std::string::npos) whole = true;
    else out.replace(at, field.size(), "\"sha256_in_prefix\": \"" + new_hash + "\"");
  }
  // conda writes its records with sorted keys and an indent of 2, as this does.
  return whole ? doc.dump(2) + "\n" : out;
}

}  // namespace

std::string conda_meta_dir(const Session& s) { return s.env.prefix + "/conda-meta"; }

std::vector<host::WriteRequest> conda_updates(Session& s, const std::vector<FileChange>& changes) {
  auto changed = by_prefix_path(s, changes);
  if (changed.empty()) return {};
  host::EntryQuery q;
  q.dirs = {conda_meta_dir(s)};
  q.patterns = {"*.json"};
  q.lists = {""};
  for (auto& [path, _] : changed) q.needles.push_back("\"" + path + "\"");
  q.wholes = {""};
  std::vector<host::WriteRequest> out;
  auto found = s.host.search({q});  // kept: the loop reads into it
  for (auto& hit : found[0]) {
    if (hit.wholes.empty() || !hit.wholes[0].exists) continue;
    const std::string& text = hit.wholes[0].content;
    std::string now = rehashed(text, changed);
    if (now != text) out.push_back({hit.wholes[0].path, now, util::sha256_hex(text), conda_meta_dir(s)});
  }
  return out;
}

}  // namespace sitepatch::engine::detail

// The patched wheel's members: the source's, in its order, the dist-info (and .data)
// folder renamed to the new version, the changed sources and METADATA new, the
// recipes and their provenance added under the dist-info's sitepatch/, RECORD rehashed
// and written last.
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/wheel/wheel_impl.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {
namespace {

struct Renamer {
  std::string from_info, to_info, from_data, to_data;
  std::string operator()(const std::string& member) const {
    if (util::starts_with(member, from_info + "/")) return to_info + member.substr(from_info.size());
    if (!from_data.empty() && util::starts_with(member, from_data + "/")) return to_data + member.substr(from_data.size());
    return member;
  }
};

Renamer renamer_for(const SourceWheel& w, const std::string& version) {
  std::string info = w.dist_info.substr(0, w.dist_info.size() - std::string(".dist-info").size());
  std::string stem = info.substr(0, info.rfind('-'));
  Renamer r;
  r.from_info = w.dist_info;
  r.to_info = stem + "-" + version + ".dist-info";
  if (!w.data_dir.empty()) {
    r.from_data = w.data_dir;
    r.to_data = stem + "-" + version + ".data";
  }
  return r;
}

bool is_signature(const SourceWheel& w, const std::string& member) {
  return member == w.dist_info + "/RECORD.jws" || member == w.dist_info + "/RECORD.p7s";
}

std::string provenance(const SourceWheel& w, const std::map<std::string, std::string>& edited,
                       const std::map<std::string, std::string>& member_of, const std::vector<recipe::Recipe>& recipes,
                       const WheelResult& r, const std::string& sitepatch_version) {
  nlohmann::json rs = nlohmann::json::array(), files = nlohmann::json::array();
  for (auto& rec : recipes)
    rs.push_back({{"id", rec.id},
                  {"file", "recipes/" + kept_recipe_name(rec.id)},
                  {"sha256", rec.hash},
                  {"description", rec.description}});
  for (auto& [rel, text] : edited) {
    auto src = w.sources.find(member_of.at(rel));
    files.push_back({{"path", rel},
                     {"before", src == w.sources.end() ? "" : util::sha256_hex(src->second)},
                     {"after", util::sha256_hex(text)}});
  }
  nlohmann::json doc = {{"format", 1},
                        {"built_by", "sitepatch " + sitepatch_version},
                        {"source", {{"wheel", r.source_file}, {"sha256", r.source_sha256}, {"version", r.version_from}}},
                        {"version", r.version_to},
                        {"recipes", rs},
                        {"files", files}};
  return doc.dump(2) + "\n";
}

// RECORD's rows for the new members: the source's rows renamed, the new bytes' hashes,
// the signatures' rows gone, RECORD's own row last with no hash (as the spec has it).
std::string new_record(const SourceWheel& w, const Renamer& rename, const std::vector<util::ZipEntry>& entries) {
  std::map<std::string, const util::ZipEntry*> fresh;
  for (auto& e : entries)
    if (e.data) fresh[e.name] = &e;
  std::vector<site::RecordEntry> rows;
  std::set<std::string> listed;
  std::string own = rename.to_info + "/RECORD";
  for (auto& row : site::parse_record(w.record)) {
    if (is_signature(w, row.path)) continue;
    site::RecordEntry out = row;
    out.path = rename(row.path);
    if (out.path == own) continue;
    if (auto it = fresh.find(out.path); it != fresh.end()) {
      out.hash = "sha256=" + util::sha256_record(*it->second->data);
      out.size = std::to_string(it->second->data->size());
    }
    listed.insert(out.path);
    rows.push_back(std::move(out));
  }
  for (auto& [name, e] : fresh)
    if (!listed.count(name))
      rows.push_back({name, "sha256=" + util::sha256_record(*e->data), std::to_string(e->data->size())});
  rows.push_back({own, "", ""});
  return site::format_record(rows);
}

}  // namespace

std::vector<util::ZipEntry> patched_members(const SourceWheel& w, const std::map<std::string, std::string>& changed,
                                            const std::map<std::string, std::string>& edited,
                                            const std::vector<recipe::Recipe>& recipes, const WheelResult& r,
                                            const std::string& sitepatch_version) {
  Renamer rename = renamer_for(w, r.version_to);
  std::map<std::string, std::string> member_of;  // site-packages path -> member
  for (auto& m : w.members)
    if (!m.dir && !site::installed_rel(m.name).empty()) member_of.emplace(site::installed_rel(m.name), m.name);
  std::vector<util::ZipEntry> out;
  for (auto& m : w.members) {
    if (m.dir || m.name == w.dist_info + "/RECORD" || is_signature(w, m.name)) continue;
    util::ZipEntry e;
    e.name = rename(m.name);
    e.executable = (m.mode & 0111) != 0;
    std::string rel = site::installed_rel(m.name);
    if (m.name == w.dist_info + "/METADATA") e.data = site::with_metadata_version(w.metadata, r.version_to);
    else if (auto it = changed.find(rel); !rel.empty() && it != changed.end()) e.data = it->second;
    else e.from = m.name;
    out.push_back(std::move(e));
  }
  std::string kept = rename.to_info + "/sitepatch/";
  for (auto& rec : recipes) out.push_back({kept + "recipes/" + kept_recipe_name(rec.id), rec.text, "", false});
  out.push_back({kept + "provenance.json", provenance(w, edited, member_of, recipes, r, sitepatch_version), "", false});
  out.push_back({rename.to_info + "/RECORD", new_record(w, rename, out), "", false});
  return out;
}

}  // namespace sitepatch::engine::detail

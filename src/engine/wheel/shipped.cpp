// Distributions installed from a wheel `sitepatch wheel` built: found by the provenance
// their dist-info keeps (one search, answered where the files are), for list, verify,
// apply and sync, which must not take their edits for upstream's or for a hand change.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/internal.hpp"
#include "sitepatch/engine/wheel.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

const char* const kProvenance = "sitepatch/provenance.json";

// One dist-info's provenance; nullopt when it is not one sitepatch wrote.
std::optional<ShippedPatch> read_provenance(const std::string& site_dir, const std::string& dist_info,
                                            const std::string& text, const std::string& metadata) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != 1) return std::nullopt;
  ShippedPatch p;
  p.site_dir = site_dir;
  p.dist_info = dist_info;
  std::tie(p.dist, p.version) = site::parse_metadata(metadata);
  p.built_by = util::printable(j.value("built_by", ""));
  if (auto src = j.find("source"); src != j.end() && src->is_object()) {
    p.source_wheel = util::printable(src->value("wheel", ""));
    p.source_sha256 = util::printable(src->value("sha256", ""));
  }
  for (auto& r : j.value("recipes", nlohmann::json::array())) {
    if (!r.is_object()) continue;
    ShippedRecipe sr;
    sr.id = util::printable(r.value("id", ""));
    sr.hash = r.value("sha256", "");
    sr.description = util::printable(r.value("description", ""));
    sr.text = r.value("file", "");  // the kept file's name until its bytes are read
    if (!sr.id.empty()) p.recipes.push_back(std::move(sr));
  }
  for (auto& f : j.value("files", nlohmann::json::array())) {
    if (!f.is_object()) continue;
    std::string rel = f.value("path", "");
    if (rel.empty() || site::unsafe_relative_path(rel)) continue;
    p.files.push_back({rel, f.value("after", ""), f.value("before", "")});
  }
  return p;
}

// Each recipe's kept text, read in one round trip.
void read_recipe_texts(host::Host& host, std::vector<ShippedPatch>& found) {
  std::vector<std::string> paths;
  std::vector<ShippedRecipe*> of;
  for (auto& p : found)
    for (auto& r : p.recipes) {
      std::string file = r.text;
      r.text.clear();
      if (file.empty() || site::unsafe_relative_path(file)) continue;
      paths.push_back(p.site_dir + "/" + p.dist_info + "/sitepatch/" + file);
      of.push_back(&r);
    }
  if (paths.empty()) return;
  auto files = host.read(paths);
  for (size_t i = 0; i < files.size() && i < of.size(); ++i)
    if (files[i].exists && !files[i].is_dir) of[i]->text = files[i].content;
}

}  // namespace

std::vector<ShippedPatch> shipped_patches(Session& s) {
  host::EntryQuery q;
  q.dirs = s.env.site_dirs;
  q.patterns = {"*.dist-info"};
  q.lists = {kProvenance};
  q.needles = {""};
  q.heads = {"METADATA"};
  std::vector<ShippedPatch> out;
  auto hits = s.host.search({q});
  for (auto& h : hits.empty() ? std::vector<host::EntryHit>{} : hits[0]) {
    if (!h.is_dir || h.lists.empty() || !h.lists[0].exists || h.heads.empty()) continue;
    if (auto p = read_provenance(q.dirs[h.dir], h.name, h.lists[0].content, h.heads[0].content))
      out.push_back(std::move(*p));
  }
  read_recipe_texts(s.host, out);
  return out;
}

std::vector<std::string> shipped_file_states(Session& s, const ShippedPatch& p) {
  std::vector<std::string> paths;
  for (auto& f : p.files) paths.push_back(p.site_dir + "/" + f.rel);
  auto files = s.host.read(paths);
  std::vector<std::string> out;
  for (size_t i = 0; i < p.files.size(); ++i) {
    if (i >= files.size() || !files[i].exists || files[i].is_dir) out.push_back("missing");
    else if (util::sha256_hex(files[i].content) != p.files[i].after) out.push_back("modified");
    else out.push_back("");
  }
  return out;
}

namespace detail {

namespace {

// Whether every edit of `id` found its change already in the files.
bool all_there(const Plan& p, const std::string& id) {
  bool any = false;
  for (auto& e : p.edits)
    if (e.recipe_id == id) {
      if (e.state != EditState::already_applied) return false;
      any = true;
    }
  return any;
}

}  // namespace

void note_shipped(Session& s, Plan& p) {
  std::vector<const recipe::Recipe*> candidates;
  for (auto& r : p.recipes)
    if (all_there(p, r.id)) candidates.push_back(&r);
  if (candidates.empty()) return;  // the search is asked only when it can change the answer
  auto shipped = shipped_patches(s);
  for (auto* r : candidates)
    for (auto& sp : shipped)
      for (auto& sr : sp.recipes) {
        if (sr.id != r->id || sr.hash != r->hash) continue;
        p.shipped.push_back(r->id);
        std::string prefix = r->id + ": ";
        p.notes.erase(std::remove_if(p.notes.begin(), p.notes.end(),
                                     [&](auto& n) { return util::starts_with(n, prefix); }),
                      p.notes.end());
        bool had = std::find(p.forget.begin(), p.forget.end(), r->id) != p.forget.end();
        p.notes.push_back(prefix + "shipped patched: the installed " + sp.dist + " " + sp.version +
                          " came from the wheel sitepatch built from this recipe (" + sp.dist_info +
                          "/sitepatch/); nothing to apply" + (had ? ", and its record of the old version is dropped" : ""));
      }
}

}  // namespace detail

std::vector<PatchStatus> shipped_statuses(Session& s, const std::vector<std::string>& ids) {
  std::vector<PatchStatus> out;
  for (auto& p : shipped_patches(s)) {
    auto states = shipped_file_states(s, p);
    for (auto& r : p.recipes) {
      if (!ids.empty() && std::find(ids.begin(), ids.end(), r.id) == ids.end()) continue;
      PatchStatus st;
      st.id = r.id;
      st.description = r.description;
      st.dist = p.dist + "==" + p.version;
      st.dists = {st.dist};
      st.recipe_hash = r.hash;
      st.history = p.site_dir + "/" + p.dist_info + "/sitepatch";
      st.shipped = p.site_dir + "/" + p.dist_info + (p.source_wheel.empty() ? "" : " (built from " + p.source_wheel + ")");
      for (size_t i = 0; i < p.files.size(); ++i) {
        FileStatus f;
        f.rel = p.files[i].rel;
        f.state = states[i].empty() ? FileState::applied : states[i] == "missing" ? FileState::missing : FileState::modified;
        if (!states[i].empty()) f.message = "not the bytes " + p.dist_info + " shipped";
        if (f.state != FileState::applied && st.state == FileState::applied) st.state = f.state;
        st.files.push_back(std::move(f));
      }
      out.push_back(std::move(st));
    }
  }
  return out;
}

}  // namespace sitepatch::engine

// Distributions installed from a wheel `sitepatch wheel` built: found by the provenance
// their dist-info keeps (one search, answered where the files are), for list, verify,
// apply and sync, which must not take their edits for upstream's or for a hand change.
// A dist-info is anyone's text: a provenance is believed only for files its own
// distribution installed (its RECORD lists them) that hold the bytes it names, and a
// malformed one is skipped with a warning, never the end of the command.
#include <algorithm>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "sitepatch/engine/wheel.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

const char* const kProvenance = "sitepatch/provenance.json";

// A string member of `j`, or "" when it is missing or not a string.
std::string text_of(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void read_lists(const nlohmann::json& j, ShippedPatch& p) {
  if (auto rs = j.find("recipes"); rs != j.end() && rs->is_array())
    for (auto& r : *rs) {
      if (!r.is_object() || text_of(r, "id").empty()) continue;
      p.recipes.push_back({util::printable(text_of(r, "id")), text_of(r, "sha256"),
                           util::printable(text_of(r, "description"))});
    }
  if (auto fs = j.find("files"); fs != j.end() && fs->is_array())
    for (auto& f : *fs) {
      if (!f.is_object()) continue;
      std::string rel = text_of(f, "path");
      if (rel.empty() || site::unsafe_relative_path(rel)) continue;
      p.files.push_back({rel, text_of(f, "after"), text_of(f, "before")});
    }
}

// One dist-info's provenance; nullopt when it is not one sitepatch wrote.
std::optional<ShippedPatch> read_provenance(const std::string& site_dir, const std::string& dist_info,
                                            const std::string& text, const std::string& metadata) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  auto format = j.is_object() ? j.find("format") : j.end();
  if (j.is_discarded() || !j.is_object() || format == j.end() || !format->is_number_integer() || *format != 1) {
    spdlog::warn("{}/{}/{}: not a provenance sitepatch wrote (format 1); its distribution is not taken as shipped "
                 "patched", util::printable(site_dir), util::printable(dist_info), kProvenance);
    return std::nullopt;
  }
  ShippedPatch p;
  p.site_dir = site_dir;
  p.dist_info = dist_info;
  std::tie(p.dist, p.version) = site::parse_metadata(metadata);
  p.built_by = util::printable(text_of(j, "built_by"));
  if (auto src = j.find("source"); src != j.end() && src->is_object()) {
    p.source_wheel = util::printable(text_of(*src, "wheel"));
    p.source_sha256 = util::printable(text_of(*src, "sha256"));
  }
  read_lists(j, p);
  return p;
}

// The files, read in one round trip; a file that cannot be read (a FIFO, a device, too
// large) is read again alone, and counts as not there rather than ending the command.
std::vector<host::FileData> read_each(host::Host& host, const std::vector<std::string>& paths) {
  try {
    return host.read(paths);
  } catch (const Error&) {
    std::vector<host::FileData> out;
    for (auto& path : paths) {
      try {
        out.push_back(host.read({path}).at(0));
      } catch (const std::exception& e) {
        spdlog::warn("{}: {}", util::printable(path), e.what());
        host::FileData missing;
        missing.path = path;
        out.push_back(std::move(missing));
      }
    }
    return out;
  }
}

// What is wrong with shipped file `i` of `p` (`now`: its bytes as read): "" when it is a
// file of p's own distribution holding the bytes the provenance names.
std::string file_state(Session& s, const ShippedPatch& p, size_t i, const host::FileData& now) {
  const site::Distribution* owner = s.distributions().owner(p.site_dir, p.files[i].rel);
  if (!owner || owner->dist_info != p.dist_info) return "foreign";
  if (!now.exists || now.is_dir) return "missing";
  return util::sha256_hex(now.content) == p.files[i].after ? "" : "modified";
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
  std::vector<std::vector<host::EntryHit>> hits;
  try {
    hits = s.host.search({q});
  } catch (const Error& e) {
    spdlog::warn("the dist-infos' sitepatch/provenance.json could not be read ({}); no distribution is taken as "
                 "shipped patched", e.what());
    return out;
  }
  for (auto& h : hits.empty() ? std::vector<host::EntryHit>{} : hits[0]) {
    if (!h.is_dir || h.lists.empty() || !h.lists[0].exists || h.heads.empty()) continue;
    if (auto p = read_provenance(q.dirs[h.dir], h.name, h.lists[0].content, h.heads[0].content))
      out.push_back(std::move(*p));
  }
  return out;
}

std::vector<std::string> shipped_file_states(Session& s, const ShippedPatch& p) {
  std::vector<std::string> paths;
  for (auto& f : p.files) paths.push_back(p.site_dir + "/" + f.rel);
  auto files = read_each(s.host, paths);
  std::vector<std::pair<std::string, std::string>> asked;
  for (auto& f : p.files) asked.emplace_back(p.site_dir, f.rel);
  s.distributions().prefetch(asked);
  std::vector<std::string> out;
  for (size_t i = 0; i < p.files.size(); ++i)
    out.push_back(file_state(s, p, i, i < files.size() ? files[i] : host::FileData{}));
  return out;
}

bool shipped_intact(Session& s, const ShippedPatch& p) {
  if (p.files.empty()) return false;  // nothing to check it by: not believed
  auto states = shipped_file_states(s, p);
  return std::all_of(states.begin(), states.end(), [](auto& st) { return st.empty(); });
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

void note_shipped(Session& s, Plan& p, const std::set<std::string>& recorded) {
  std::vector<const recipe::Recipe*> candidates;
  for (auto& r : p.recipes)
    if (all_there(p, r.id)) candidates.push_back(&r);
  if (candidates.empty()) return;  // the search is asked only when it can change the answer
  auto shipped = shipped_patches(s);
  for (auto* r : candidates)
    for (auto& sp : shipped) {
      bool names_it = std::any_of(sp.recipes.begin(), sp.recipes.end(),
                                  [&](auto& sr) { return sr.id == r->id && sr.hash == r->hash; });
      if (!names_it || !shipped_intact(s, sp)) continue;
      p.shipped.push_back(r->id);
      std::string prefix = r->id + ": ";
      p.notes.erase(std::remove_if(p.notes.begin(), p.notes.end(), [&](auto& n) { return util::starts_with(n, prefix); }),
                    p.notes.end());
      // A record from before the wheel was installed describes files pip replaced.
      bool had = recorded.count(r->id) > 0;
      if (had && std::find(p.forget.begin(), p.forget.end(), r->id) == p.forget.end()) p.forget.push_back(r->id);
      p.notes.push_back(prefix + "shipped patched: the installed " + sp.dist + " " + sp.version +
                        " came from the wheel sitepatch built from this recipe (" + sp.dist_info +
                        "/sitepatch/); nothing to apply" + (had ? ", and its record here is dropped" : ""));
      break;
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
        if (states[i] == "foreign") f.message = "not a file " + p.dist_info + " installed (its RECORD does not list it)";
        else if (!states[i].empty()) f.message = "not the bytes " + p.dist_info + " shipped";
        if (f.state != FileState::applied && st.state == FileState::applied) st.state = f.state;
        st.files.push_back(std::move(f));
      }
      if (p.files.empty()) {
        st.state = FileState::modified;  // a provenance that names no file proves nothing
        st.files.push_back({"", FileState::modified, p.dist_info + "/sitepatch/provenance.json names no file", "", false, ""});
      }
      out.push_back(std::move(st));
    }
  }
  return out;
}

}  // namespace sitepatch::engine

// A note beside the patched files, `<site-packages>/.sitepatch-patched.json`, that says
// which patches changed files there and where their history is: if the history is
// deleted, verify and rollback say so instead of reporting a clean environment, and
// name the reinstalls that bring pip's files back.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/internal.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {
namespace {

const char* kMarker = ".sitepatch-patched.json";

std::string marker_text(const Session& s, const std::vector<const store::PatchRecord*>& records,
                        const std::string& site) {
  nlohmann::json patches = nlohmann::json::object();
  std::set<std::string> reinstall;
  for (auto* r : records) {
    nlohmann::json files = nlohmann::json::array();
    for (auto& f : r->files) {
      if (f.site_dir != site) continue;
      files.push_back({{"file", f.rel}, {"distribution", f.dist}, {"version", f.version}});
      if (!f.dist.empty()) reinstall.insert(f.dist + "==" + f.version);
    }
    if (!files.empty()) patches[r->id] = files;
  }
  nlohmann::json doc = {
      {"about", "sitepatch patched files in this folder; the history that can undo it is in " + s.state_dir},
      {"history", s.state_dir},
      {"reinstall", std::vector<std::string>(reinstall.begin(), reinstall.end())},
      {"patches", patches}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The history a note names ("" when unreadable).
std::string history_of(const host::FileData& note) {
  if (!note.exists) return "";
  auto doc = nlohmann::json::parse(note.content, nullptr, false);
  if (!doc.is_object()) return "";
  auto h = doc.find("history");
  return h != doc.end() && h->is_string() ? h->get<std::string>() : "";
}

// `name==version` as marker_text writes it: a distribution name (PEP 508) and a version's
// characters (PEP 440), nothing a shell would read as more than one word. A note is a
// file anyone with a wheel can ship: what it says is printed only when it has this form.
bool valid_pin(std::string_view s) {
  size_t eq = s.find("==");
  if (eq == std::string_view::npos || eq == 0 || eq + 2 >= s.size()) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::string_view name = s.substr(0, eq), version = s.substr(eq + 2);
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  for (char c : version)
    if (!alnum(c) && c != '.' && c != '+' && c != '!' && c != '_' && c != '-') return false;
  return true;
}

// Each site folder (the environment's, and every one `after` names) with the records
// that have files there.
std::map<std::string, std::vector<const store::PatchRecord*>> by_site_of(const Session& s,
                                                                         const std::vector<store::PatchRecord>& after) {
  std::map<std::string, std::vector<const store::PatchRecord*>> by_site;
  for (auto& d : s.env.site_dirs) by_site[d];
  for (auto& r : after)
    for (auto& f : r.files) {
      auto& list = by_site[f.site_dir];
      if (list.empty() || list.back() != &r) list.push_back(&r);
    }
  return by_site;
}

}  // namespace

std::vector<std::string> marker_paths(const Session& s, const std::vector<store::PatchRecord>& after) {
  std::vector<std::string> paths;
  for (auto& [site, _] : by_site_of(s, after)) paths.push_back(site + "/" + kMarker);
  return paths;
}

MarkerChange markers_for(Session& s, const std::vector<store::PatchRecord>& after) {
  return markers_for(s, after, s.host.read(marker_paths(s, after)));
}

MarkerChange markers_for(Session& s, const std::vector<store::PatchRecord>& after,
                         const std::vector<host::FileData>& now) {
  auto by_site = by_site_of(s, after);
  MarkerChange out;
  size_t i = 0;
  for (auto& [site, records] : by_site) {
    const auto& cur = now[i++];
    if (records.empty()) {
      // A folder the environment shares keeps the note of its owner's history.
      bool ours = site::shared_owner(s.env, site).empty() || history_of(cur) == s.state_dir;
      if (cur.exists && ours) out.remove.push_back(cur.path);
      continue;
    }
    std::string text = marker_text(s, records, site);
    if (cur.exists && cur.content == text) continue;
    out.write.push_back({cur.path, text, cur.exists ? util::sha256_hex(cur.content) : "", site});
  }
  return out;
}

std::optional<std::string> lost_history(Session& s, const std::vector<std::string>& known, bool own_missing) {
  std::vector<std::string> paths;
  std::vector<bool> shared;
  for (auto& d : s.env.site_dirs) {
    bool theirs = !site::shared_owner(s.env, d).empty();
    if (!own_missing && !theirs) continue;
    paths.push_back(d + "/" + kMarker);
    shared.push_back(theirs);
  }
  if (paths.empty()) return std::nullopt;  // no read when nothing could be lost
  std::vector<std::string> found, ids, reinstall, histories;
  size_t unreadable = 0;  // entries no id or distribution can be: not printed
  auto notes = s.host.read(paths);
  for (size_t i = 0; i < notes.size(); ++i) {
    const auto& f = notes[i];
    if (!f.exists) continue;
    std::string names = history_of(f);
    if (std::find(known.begin(), known.end(), names) != known.end()) continue;
    found.push_back(f.path);
    // A note in our own folder is ours, whatever path it recorded (the venv may have moved).
    std::string lost = shared[i] && !names.empty() ? util::printable(names) : s.state_dir;
    if (std::find(histories.begin(), histories.end(), lost) == histories.end()) histories.push_back(lost);
    auto doc = nlohmann::json::parse(f.content, nullptr, false);
    if (!doc.is_object()) continue;
    const auto patches = doc.value("patches", nlohmann::json::object());  // kept alive while iterated
    for (auto& [id, _] : patches.items())
      if (recipe::valid_id(id)) ids.push_back(id);
      else ++unreadable;
    const auto dists = doc.value("reinstall", nlohmann::json::array());
    for (auto& d : dists)
      if (d.is_string() && valid_pin(d.get<std::string>())) reinstall.push_back(d.get<std::string>());
      else ++unreadable;
  }
  if (found.empty()) return std::nullopt;
  std::string msg = util::join(found, ", ") + " says sitepatch patched files here (" +
                    (ids.empty() ? std::string("patches unknown") : util::join(ids, ", ")) +
                    "), but there is no history at " + util::join(histories, ", ") +
                    " to tell what changed or undo it (was it deleted, or is --state-dir missing?)";
  if (!reinstall.empty())
    msg += "; pip's files come back with: pip install --force-reinstall --no-deps " + util::join(reinstall, " ");
  if (unreadable)
    msg += "; " + std::to_string(unreadable) + " entr" + (unreadable == 1 ? "y" : "ies") +
           " of the note name no patch or distribution and are not shown";
  msg += "; then remove " + util::join(found, ", ");
  return msg;
}

}  // namespace sitepatch::engine::detail

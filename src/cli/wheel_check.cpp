// sitepatch wheel RECIPE... --check: whether the environment runs the wheel these recipes
// make (installed from it, each recipe shipped with this content, the files as shipped).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "commands.hpp"
#include "sitepatch/engine/wheel.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

struct CheckLine {
  std::string id, state, why, dist;
};

CheckLine check_one(engine::Session& s, const recipe::Recipe& r, const std::vector<engine::ShippedPatch>& shipped,
                    std::set<const engine::ShippedPatch*>& seen) {
  for (auto& p : shipped)
    for (auto& sr : p.recipes) {
      if (sr.id != r.id) continue;
      seen.insert(&p);
      std::string dist = p.dist + " " + p.version;
      if (sr.hash != r.hash)
        return {r.id, "other", dist + " was built from another content of " + r.id + " (its recipe is " +
                                   p.dist_info + "/sitepatch/; build the wheel again from " + r.path + ")",
                dist};
      auto states = engine::shipped_file_states(s, p);
      for (size_t i = 0; i < states.size(); ++i)
        if (states[i] == "foreign")
          return {r.id, "changed", dist + ": " + p.files[i].rel + " is not a file it installed (its RECORD does not "
                                   "list it)", dist};
        else if (!states[i].empty())
          return {r.id, "changed", dist + ": " + p.files[i].rel + " is " + states[i] + " since it was installed",
                  dist};
      if (states.empty())
        return {r.id, "changed", dist + ": its provenance names no file to check the recipe by", dist};
      return {r.id, "shipped", "in " + dist + (p.source_wheel.empty() ? "" : ", built from " + p.source_wheel), dist};
    }
  return {r.id, "missing", "no installed distribution came patched with it (install the wheel sitepatch wheel makes)",
          ""};
}

}  // namespace

int check_shipped(const GlobalOptions& g, const std::vector<recipe::Recipe>& recipes) {
  Env env = open_env(g);
  Output out(g);
  auto shipped = engine::shipped_patches(*env.session);
  std::vector<CheckLine> lines;
  std::set<const engine::ShippedPatch*> seen;
  for (auto& r : recipes) lines.push_back(check_one(*env.session, r, shipped, seen));
  for (auto* p : seen)
    for (auto& sr : p->recipes)
      if (std::none_of(recipes.begin(), recipes.end(), [&](auto& r) { return r.id == sr.id; }))
        lines.push_back({sr.id, "extra", p->dist + " " + p->version + " also carries it; these recipes do not",
                         p->dist + " " + p->version});
  bool in_sync = std::all_of(lines.begin(), lines.end(), [](auto& l) { return l.state == "shipped"; });
  if (out.json()) {
    nlohmann::json rs = nlohmann::json::array();
    for (auto& l : lines) rs.push_back({{"id", l.id}, {"state", l.state}, {"why", l.why}, {"dist", or_null(l.dist)}});
    out.document({{"ok", true}, {"in_sync", in_sync}, {"recipes", rs}});
  } else {
    size_t w = 0;
    for (auto& l : lines) w = std::max(w, l.id.size());
    for (auto& l : lines) out.out(fmt::format("{:<8}  {:<{}}  {}", l.state, l.id, w, l.why));
    if (!in_sync) out.err("the environment does not run the wheel these recipes make");
  }
  return int(in_sync ? Exit::ok : Exit::not_intact);
}

}  // namespace sitepatch::cli

// sitepatch verify [ID...]: each patched file against the history; exit 3 when any
// is not as sitepatch left it.
#include <algorithm>

#include "commands.hpp"
#include "sitepatch/engine/wheel.hpp"
#include "status_json.hpp"

namespace sitepatch::cli {

Runner register_verify(CLI::App& app, const GlobalOptions& g) {
  auto ids = std::make_shared<std::vector<std::string>>();
  app.add_option("ids", *ids, "Patch ids (default: every applied patch)");
  return [&g, ids] {
    Env env = open_env(g);
    Output o(g);
    // Patches the distributions came with (a wheel sitepatch wheel built) have no history.
    auto shipped = engine::shipped_statuses(*env.session, {});
    std::vector<std::string> own;
    for (auto& id : *ids)
      if (std::none_of(shipped.begin(), shipped.end(), [&](auto& s) { return s.id == id; })) own.push_back(id);
    std::vector<engine::PatchStatus> statuses;
    if (ids->empty() || !own.empty()) statuses = engine::verify(*env.session, own);
    for (auto& s : shipped)
      if (ids->empty() || std::find(ids->begin(), ids->end(), s.id) != ids->end()) statuses.push_back(std::move(s));
    bool intact = true;
    for (auto& s : statuses) {
      intact = intact && s.state == engine::FileState::applied && s.unfinished.empty();
      for (auto& f : s.files) intact = intact && f.broken.empty();
    }
    if (o.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (auto& s : statuses) arr.push_back(status_json(s));
      o.document({{"ok", intact}, {"patches", arr}});
    } else if (statuses.empty()) {
      o.out("no patches applied in " + env.session->env.prefix);
    } else {
      for (auto& s : statuses) {
        o.out(s.id + "  " + o.paint(std::string(engine::state_name(s.state)), paint_for(s.state)) +
              (s.shipped.empty() ? "" : "  (shipped patched: " + s.shipped + ")"));
        if (!s.unfinished.empty()) o.out("  " + o.paint("unfinished: " + s.unfinished_message, Paint::bad));
        for (auto& f : s.files) {
          std::string line = "  " + f.rel + "  " +
                             o.paint(std::string(engine::state_name(f.state)), paint_for(f.state));
          if (!f.message.empty()) line += "  (" + f.message + ")";
          o.out(line);
          if (!f.broken.empty()) o.out("    " + o.paint("broken: " + f.broken, Paint::bad));
        }
      }
      // "changed by others" has a remedy: keep the files as they are now.
      for (auto& s : statuses)
        if (s.shipped.empty() && engine::advice_for(s) == engine::Advice::review)
          o.out("to keep " + s.id + "'s files as they are now: " + env.session->invocation + " adopt " + s.id +
                " (its --dry-run shows their change first)");
    }
    return int(intact ? Exit::ok : Exit::not_intact);
  };
}

}  // namespace sitepatch::cli

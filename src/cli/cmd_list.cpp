// sitepatch list: what is applied, to what, when, and whether it is still intact
// (with a line for each file that is not).
#include <algorithm>

#include <fmt/format.h>

#include "commands.hpp"
#include "sitepatch/engine/wheel.hpp"
#include "sitepatch/util/strings.hpp"
#include "status_json.hpp"

namespace sitepatch::cli {

Runner register_list(CLI::App&, const GlobalOptions& g) {
  return [&g] {
    Env env = open_env(g);
    Output o(g);
    auto statuses = engine::verify(*env.session, {});
    // What the environment's distributions came with (a wheel sitepatch wheel built).
    for (auto& s : engine::shipped_statuses(*env.session, {})) statuses.push_back(std::move(s));
    // An apply a killed sitepatch left half-done is no patch to list as applied.
    bool finished = std::all_of(statuses.begin(), statuses.end(), [](auto& s) { return s.unfinished.empty(); });
    int code = int(finished ? Exit::ok : Exit::not_intact);
    if (o.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (auto& s : statuses) arr.push_back(status_json(s));
      o.document({{"ok", finished}, {"patches", arr}});
      return code;
    }
    if (statuses.empty()) {
      o.out("no patches applied in " + env.session->env.prefix);
      return int(Exit::ok);
    }
    // A recipe that patched files of several distributions names each.
    auto dists = [](const engine::PatchStatus& s) { return s.dists.empty() ? s.dist : util::join(s.dists, ","); };
    size_t w_id = 2, w_dist = 12;
    for (auto& s : statuses) {
      w_id = std::max(w_id, s.id.size());
      w_dist = std::max(w_dist, dists(s).size());
    }
    o.out(o.paint(fmt::format("{:<{}}  {:<{}}  {:>5}  {:<20}  {}", "ID", w_id, "DISTRIBUTION", w_dist,
                              "FILES", "APPLIED", "STATE"),
                  Paint::header));
    for (auto& s : statuses) {
      o.out(fmt::format("{:<{}}  {:<{}}  {:>5}  {:<20}  ", s.id, w_id, dists(s), w_dist, s.files.size(),
                        s.shipped.empty() ? format_time(s.applied_at) : "shipped (wheel)") +
            (s.unfinished.empty() ? o.paint(std::string(engine::state_name(s.state)), paint_for(s.state))
                                  : o.paint("unfinished (" + s.unfinished + ")", Paint::bad)));
      if (!s.unfinished.empty()) o.out("  " + s.unfinished_message);
      // A patch another environment's history keeps: whose, so nobody looks for it here.
      if (!s.shared_by.empty()) o.out("  history " + s.history + ", with " + s.shared_by);
      if (!s.shipped.empty()) o.out("  shipped patched: " + s.shipped);
      // A file that is not as sitepatch left it gets its own line: which, and why.
      for (auto& f : s.files)
        if (f.state != engine::FileState::applied)
          o.out("  " + f.rel + "  " + o.paint(std::string(engine::state_name(f.state)), paint_for(f.state)) +
                "  (" + f.message + ")");
    }
    return code;
  };
}

}  // namespace sitepatch::cli

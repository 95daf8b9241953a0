// sitepatch log: the history, newest first.
#include "commands.hpp"

namespace sitepatch::cli {

Runner register_log(CLI::App&, const GlobalOptions& g) {
  return [&g] {
    Env env = open_env(g);
    Output o(g);
    auto entries = engine::log(*env.session);
    if (o.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (auto& e : entries)
        arr.push_back({{"commit", e.oid}, {"time", e.time}, {"summary", e.summary}, {"message", e.message}});
      o.document({{"ok", true}, {"history", env.session->state_dir}, {"entries", arr}});
      return int(Exit::ok);
    }
    if (entries.empty()) o.out("no history yet in " + env.session->state_dir);
    for (auto& e : entries)
      o.out(o.paint(e.oid.substr(0, 10), Paint::warn) + "  " + format_time(e.time) + "  " + e.summary);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli

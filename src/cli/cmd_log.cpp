// sitepatch log [-p] [-n N]: the history, newest first; with -p each entry's diff.
#include "commands.hpp"

namespace sitepatch::cli {

Runner register_log(CLI::App& app, const GlobalOptions& g) {
  struct Opts {
    bool patch = false;
    size_t max = 0;
  };
  auto opts = std::make_shared<Opts>();
  app.add_flag("-p,--patch", opts->patch,
               "Follow each entry with the diff it made to the files (paths relative to site-packages, as show prints them)");
  app.add_option("-n,--max-count", opts->max, "Show only the newest N entries")->type_name("N");
  return [&g, opts] {
    Env env = open_env(g);
    Output o(g);
    auto entries = engine::log(*env.session, opts->patch, opts->max);
    if (o.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (auto& e : entries) arr.push_back(entry_json(e, opts->patch));
      o.document({{"ok", true}, {"history", env.session->state_dir}, {"entries", arr}});
      return int(Exit::ok);
    }
    if (entries.empty()) o.out("no history yet in " + env.session->state_dir);
    if (!opts->patch) {
      for (auto& e : entries)
        o.out(o.paint(e.oid.substr(0, 10), Paint::warn) + "  " + format_time(e.time) + "  " + e.summary);
      return int(Exit::ok);
    }
    o.page();
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) o.out("");
      print_entry(o, entries[i]);
    }
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli

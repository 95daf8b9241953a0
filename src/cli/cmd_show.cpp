// sitepatch show ID: an applied patch as a unified diff relative to site-packages.
#include "commands.hpp"

namespace sitepatch::cli {

Runner register_show(CLI::App& app, const GlobalOptions& g) {
  auto id = std::make_shared<std::string>();
  app.add_option("id", *id, "Patch id")->required();
  return [&g, id] {
    Env env = open_env(g);
    Output o(g);
    std::string diff = engine::show(*env.session, *id);
    if (o.json()) o.document({{"ok", true}, {"id", *id}, {"diff", diff}});
    else o.diff(diff);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli

// sitepatch show ID|COMMIT: an applied patch as a unified diff relative to site-packages,
// or a history commit as `git show` prints it; or (--recipe) the recipe as applied.
#include <iostream>

#include "commands.hpp"

namespace sitepatch::cli {

Runner register_show(CLI::App& app, const GlobalOptions& g) {
  auto id = std::make_shared<std::string>();
  auto recipe = std::make_shared<bool>(false);
  app.add_option("id", *id,
                 "An applied patch's id, or a commit of the history as log prints it (4 hex digits or more); "
                 "a patch id wins over a commit prefix")
      ->required()
      ->type_name("ID|COMMIT");
  app.add_flag("--recipe", *recipe, "Print the recipe of an applied patch as it was applied (the history keeps a copy)");
  return [&g, id, recipe] {
    Env env = open_env(g);
    Output o(g);
    if (*recipe) {
      std::string text = engine::show_recipe(*env.session, *id);
      if (o.json()) o.document({{"ok", true}, {"id", *id}, {"recipe", text}});
      else std::cout << text;
      return int(Exit::ok);
    }
    auto shown = engine::show(*env.session, *id);
    if (o.json()) {
      if (shown.commit) o.document({{"ok", true}, {"commit", entry_json(*shown.commit, true)}});
      else o.document({{"ok", true}, {"id", shown.id}, {"diff", shown.diff}});
      return int(Exit::ok);
    }
    o.page();
    if (shown.commit) print_entry(o, *shown.commit);
    else o.diff(shown.diff);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli

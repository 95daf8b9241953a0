// sitepatch show ID: an applied patch as a unified diff relative to site-packages, or
// (--recipe) the recipe as it was applied.
#include <iostream>

#include "commands.hpp"

namespace sitepatch::cli {

Runner register_show(CLI::App& app, const GlobalOptions& g) {
  auto id = std::make_shared<std::string>();
  auto recipe = std::make_shared<bool>(false);
  app.add_option("id", *id, "Patch id")->required();
  app.add_flag("--recipe", *recipe, "Print the recipe as it was applied (the history keeps a copy)");
  return [&g, id, recipe] {
    Env env = open_env(g);
    Output o(g);
    if (*recipe) {
      std::string text = engine::show_recipe(*env.session, *id);
      if (o.json()) o.document({{"ok", true}, {"id", *id}, {"recipe", text}});
      else std::cout << text;
      return int(Exit::ok);
    }
    std::string diff = engine::show(*env.session, *id);
    if (o.json()) o.document({{"ok", true}, {"id", *id}, {"diff", diff}});
    else o.diff(diff);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli

// sitepatch plan RECIPE...: the exact diff apply would make; writes nothing.
#include "commands.hpp"

namespace sitepatch::cli {

Runner register_plan(CLI::App& app, const GlobalOptions& g) {
  auto recipes = std::make_shared<std::vector<std::string>>();
  app.add_option("recipes", *recipes, "Recipe files (YAML), folders of them (*.yaml in name order), or - for standard input")->required();
  return [&g, recipes] {
    auto loaded = load_recipes(*recipes);
    Env env = open_env(g);
    Output o(g);
    auto p = engine::plan(*env.session, std::move(loaded));
    if (o.json()) o.document(plan_json(p));
    else print_plan(o, p);
    return int(p.ok() ? Exit::ok : Exit::failed);
  };
}

}  // namespace sitepatch::cli

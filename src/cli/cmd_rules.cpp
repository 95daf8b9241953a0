// sitepatch rules: the rules audit would use, shipped and from --rules files.
#include <fmt/format.h>

#include "commands.hpp"

namespace sitepatch::cli {

Runner register_rules(CLI::App& app, const GlobalOptions& g) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto no_default = std::make_shared<bool>(false);
  app.add_option("--rules", *files, "A rules file to add, as audit --rules does; repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_flag("--no-default-rules", *no_default, "Leave out the shipped set");
  return [&g, files, no_default] {
    audit::RuleSet rules = load_rules(*files, !*no_default);
    Output o(g);
    if (o.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (auto& r : rules.all())
        arr.push_back({{"id", r.id}, {"match", r.match}, {"category", r.category}, {"message", r.message},
                       {"severity", audit::to_string(r.severity)}, {"origin", r.origin}, {"line", r.line}});
      o.document({{"ok", true}, {"rules", arr}});
      return int(Exit::ok);
    }
    size_t wi = 2, wm = 5, wc = 8;
    for (auto& r : rules.all()) {
      wi = std::max(wi, r.id.size());
      wm = std::max(wm, r.match.size());
      wc = std::max(wc, r.category.size());
    }
    o.out(o.paint(fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<8}  {}", "ID", wi, "MATCH", wm, "CATEGORY", wc, "SEVERITY",
                              "FROM"),
                  Paint::header));
    for (auto& r : rules.all())
      o.out(fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<8}  {}:{}", r.id, wi, r.match, wm, r.category, wc,
                        audit::to_string(r.severity), r.origin, r.line));
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli

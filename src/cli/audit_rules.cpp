// The rules audit and `sitepatch rules` use: the shipped set, then each --rules file.
#include "commands.hpp"
#include "sitepatch/util/file.hpp"

namespace sitepatch::cli {

audit::RuleSet load_rules(const std::vector<std::string>& files, bool builtin) {
  audit::RuleSet rules;
  if (builtin) rules.add(audit::builtin_rules());
  for (auto& path : files) {
    auto text = util::read_named_file(path);
    if (!text) throw Error("cannot read rules file " + text.error(), Exit::usage);
    rules.add(audit::parse_rules(*text, path));
  }
  if (rules.empty()) throw Error("no rules to audit with: --no-default-rules needs --rules FILE", Exit::usage);
  return rules;
}

}  // namespace sitepatch::cli

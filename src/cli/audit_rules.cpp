// The rules audit and `sitepatch rules` use: the shipped set, then each --rules file.
#include "commands.hpp"
#include "sitepatch/engine/calibrate.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

audit::RuleSet load_rules(const std::vector<std::string>& files, bool builtin) {
  audit::RuleSet rules;
  if (builtin) rules.add(audit::builtin_rules());
  for (auto& path : files) {
    check_code_file(path, "rules", "rules --calibrate runs each rule's probe");
    auto text = util::read_named_file(path);
    if (!text) throw Error("cannot read rules file " + text.error(), Exit::usage);
    rules.add(audit::parse_rules(*text, path));
  }
  if (rules.empty()) throw Error("no rules to audit with: --no-default-rules needs --rules FILE", Exit::usage);
  return rules;
}

CalibratedRules with_calibration(const audit::RuleSet& rules, engine::Session* session) {
  CalibratedRules out{rules, {}, ""};
  if (!session) return out;
  auto cal = engine::kept_calibration(*session);
  if (!cal) return out;
  out.torch = cal->torch;
  out.rules = engine::without_traced(rules, *cal, out.traced);
  return out;
}

std::string CalibratedRules::note() const {
  if (traced.empty()) return "";
  return "not flagged: " + util::join(traced, ", ") + " (traced by torch " + torch +
         " in this environment, as `sitepatch rules --calibrate` found)";
}

nlohmann::json CalibratedRules::json() const {
  if (torch.empty()) return nullptr;
  return {{"torch", torch}, {"traced", traced}};
}

}  // namespace sitepatch::cli

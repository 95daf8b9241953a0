// explain --run's check of hints before any run: each hint's new body evaluated in the
// environment's Python (one process for all of them), so that a body that raises or
// gives None there (torch.version.cuda on a CPU-only torch) is skipped, saying why,
// instead of costing a run or being kept because dynamo got past it.
#include <nlohmann/json.hpp>

#include "engine/proofs/run_impl.hpp"
#include "engine/python_answer.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

// argv[1]: [{key, module, body, ensure_import}]; prints one JSON line: per item, a
// value's repr, an error, or "unchecked" with why (the module does not import). -I: the
// caller's folder and PYTHONPATH stay off sys.path; -B: no __pycache__ is written into
// the environment. Python 3.6 and later.
constexpr const char* kProbe = R"(import importlib, json, sys
out = {}
for item in json.loads(sys.argv[1]):
    try:
        ns = dict(vars(importlib.import_module(item["module"])))
    except BaseException as e:
        out[item["key"]] = {"unchecked": "%s: %s" % (type(e).__name__, e)}
        continue
    try:
        if item["ensure_import"]:
            exec(item["ensure_import"], ns)
        exec("def __sitepatch_probe__():\n" + item["body"], ns)
        value = ns["__sitepatch_probe__"]()
        out[item["key"]] = {"value": repr(value)[:80], "none": value is None}
    except BaseException as e:
        out[item["key"]] = {"error": "%s: %s" % (type(e).__name__, str(e)[:160])}
sys.stdout.write("sitepatch-hint-check: " + json.dumps(out) + "\n")
)";

std::string indented(const std::string& body) {
  std::string out;
  for (auto& line : util::split(body, '\n')) out += "    " + line + "\n";
  return out;
}

}  // namespace

std::map<std::string, std::string> check_hints(Session& s, const std::vector<Candidate>& hints) {
  std::map<std::string, std::string> out;
  nlohmann::json items = nlohmann::json::array();
  for (const Candidate& c : hints)
    items.push_back({{"key", c.key()},
                     {"module", c.fix.module},
                     {"body", indented(c.fix.code)},
                     {"ensure_import", c.fix.ensure_import}});
  if (items.empty()) return out;
  auto j = detail::python_answer(s, kProbe, items.dump(), "sitepatch-hint-check: ");
  if (!j.is_object()) return out;  // not checked: each hint is run as before
  for (const Candidate& c : hints) {
    if (!j.contains(c.key())) continue;
    const auto& v = j[c.key()];
    if (v.contains("error"))
      out[c.key()] = "its new body raises here: " + util::printable(v["error"].get<std::string>());
    else if (v.value("none", false))
      out[c.key()] = "its new body gives None here";
  }
  return out;
}

}  // namespace sitepatch::engine

// try: the plan's new texts, handed to an import hook in the command's Pythons.
#include "sitepatch/engine/try.hpp"

#include <nlohmann/json.hpp>

#include "sitepatch/site/environment.hpp"
#include "sitepatch_try_hook_source.hpp"

namespace sitepatch::engine {

host::CommandRun try_run(const Plan& p, const std::vector<std::string>& argv) {
  nlohmann::json files = nlohmann::json::array();
  for (const FileChange& f : p.files)
    files.push_back({{"path", f.path},
                     {"module", site::module_for_file(f.rel)},
                     {"old_sha256", f.old_sha},
                     {"text", f.new_text}});
  host::CommandRun run;
  run.argv = argv;
  run.files["sitecustomize.py"] = embedded::try_hook_source;
  run.files["try.json"] = nlohmann::json{{"files", files}}.dump();
  run.env["SITEPATCH_TRY"] = "{dir}/try.json";
  run.env["PYTHONDONTWRITEBYTECODE"] = "1";
  run.path_first = {"PYTHONPATH"};
  return run;
}

}  // namespace sitepatch::engine

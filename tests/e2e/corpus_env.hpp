#pragma once
// The dynamo corpus (tests/data/dynamo-corpus/) as tests use it: a shape read from its
// folder, and a venv (torch through a .pth) with its package installed and a repro that
// compiles it with fullgraph=True.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/torch_env.hpp"

namespace corpus {

// One shape of tests/data/dynamo-corpus/<name>/: its package below site-packages/,
// shape.json's `call` (the compiled lambda's body, of x) and `fixes` (what the search
// must prove, as it describes them, in order; none: no fix exists and it must say so).
struct Shape {
  std::string name, dir, call;
  std::vector<std::string> fixes;
  bool outside = false;  // shape.json's `outside`: the proof is also checked with the recipe applied
  std::string repro;     // shape.json's `repro`: its own model script (compiled first, then eager, compared)
};

inline const std::string kCorpus = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-corpus";

inline Shape shape(const std::string& name) {
  Shape s;
  s.name = name;
  s.dir = kCorpus + "/" + name;
  auto j = nlohmann::json::parse(testsupport::slurp(s.dir + "/shape.json"));
  s.call = j["call"];
  for (auto& f : j["fixes"]) s.fixes.push_back(f);
  s.outside = j.value("outside", false);
  if (j.contains("repro") && j["repro"].is_string()) s.repro = s.dir + "/" + j["repro"].get<std::string>();
  return s;
}

struct CorpusEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string app;
  explicit CorpusEnv(const Shape& s) : venv(testsupport::torch_venv(tmp.path + "/venv")), app(tmp.path + "/app") {
    std::filesystem::copy(s.dir + "/site-packages", venv.site_packages, std::filesystem::copy_options::recursive);
    if (!s.repro.empty()) {
      std::filesystem::create_directories(app);
      std::filesystem::copy_file(s.repro, app + "/repro.py");
      return;
    }
    testsupport::spit(app + "/repro.py", "import torch\n\nimport " + s.name +
                                             "\n\nf = torch.compile(lambda x: " + s.call +
                                             ", backend=\"eager\", fullgraph=True)\nprint(f(torch.ones(4)).tolist())\n");
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const { return e2e::sp_in(app, venv.root, std::move(args)); }
};

}  // namespace corpus

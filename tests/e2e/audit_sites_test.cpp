// audit across the several folders an environment imports from (its own site-packages
// and a folder a .pth file adds): each SARIF location names the folder its file is
// relative to, so a dashboard opens the file that made the call.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

struct SitesEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string shared = tmp.path + "/shared";
  SitesEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    venv.install({e2e::data_wheel("rp-layouts", "1.0", tmp.path + "/wheels")});
    testsupport::spit(shared + "/sharedpkg/__init__.py", "");
    testsupport::spit(shared + "/sharedpkg/run.py",
                      "import subprocess\n"
                      "from rp.jit.fp4 import gen\n"
                      "\n"
                      "def go():\n"
                      "    gen()\n"
                      "    return subprocess.run(['true'])\n");
    testsupport::spit(venv.site_packages + "/extra.pth", shared + "\n");
  }
  nlohmann::json sarif(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    args.insert(args.end(), {"--format", "sarif"});
    auto r = testsupport::run_sitepatch(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  }
};

// "SITE2 sharedpkg/run.py:6" for a location.
std::string where(const nlohmann::json& location) {
  auto& p = location["physicalLocation"];
  return p["artifactLocation"]["uriBaseId"].get<std::string>() + " " + p["artifactLocation"]["uri"].get<std::string>() +
         ":" + std::to_string(p["region"]["startLine"].get<int>());
}

}  // namespace

TEST_CASE("audit --format sarif: one base a site folder, each location relative to its own", "[e2e][audit]") {
  SitesEnv env;
  nlohmann::json bases = {{"SITE1", {{"uri", "file://" + env.venv.site_packages + "/"}}},
                          {"SITE2", {{"uri", "file://" + env.shared + "/"}}}};
  // A walk from the .pth folder into the venv's site-packages.
  auto w = env.sarif({"audit", "sharedpkg.run:go"});
  auto& run = w["runs"][0];
  CHECK(run["originalUriBaseIds"] == bases);
  std::vector<std::string> found, flow;
  for (auto& res : run["results"]) found.push_back(where(res["locations"][0]));
  CHECK(found == std::vector<std::string>{"SITE2 sharedpkg/run.py:6", "SITE1 rp/jit/cpp_ext.py:5"});
  for (auto& step : run["results"][1]["codeFlows"][0]["threadFlows"][0]["locations"])
    flow.push_back(where(step["location"]));
  CHECK(flow == std::vector<std::string>{"SITE2 sharedpkg/run.py:5", "SITE1 rp/jit/fp4.py:5",
                                         "SITE1 rp/jit/cpp_ext.py:5"});

  // A scan of a module in the .pth folder.
  auto s = env.sarif({"audit", "--module", "sharedpkg"});
  CHECK(s["runs"][0]["originalUriBaseIds"] == bases);
  REQUIRE(s["runs"][0]["results"].size() == 1);
  CHECK(where(s["runs"][0]["results"][0]["locations"][0]) == "SITE2 sharedpkg/run.py:6");
}

// rules --calibrate on real torch 2.13 (the tests' CPU venv): each rule's probe run
// inside torch.compile(fullgraph=True); what this torch traces is then left out by
// audit (and explain), said so, and shown by `rules`; kept per torch version; over
// --host too.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/sshd.hpp"
#include "support/torch_env.hpp"

namespace {

const char* kUser =
    "import math\n"
    "import subprocess\n"
    "\n"
    "\n"
    "def scale(x):\n"
    "    subprocess.run(['true'])\n"
    "    return math.sqrt(x)\n";

// A rule for an operation dynamo traces (math.sqrt of a constant), with its probe.
const char* kSqrtRule =
    "rules:\n  - id: sqrt\n    match: math.sqrt\n    category: math\n    message: takes a square root\n"
    "    probe: math.sqrt(4.0)\n";

}  // namespace

TEST_CASE("rules --calibrate: this torch's answer per rule, kept, and audit leaves out what it traces",
          "[e2e][audit][torch]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  venv.install(testsupport::build_wheel({"itemuser", "1.0", {{"itemuser/__init__.py", ""}, {"itemuser/ops.py", kUser}}},
                                        tmp.path + "/wheels"));
  std::map<std::string, std::string> vars = {{"XDG_CACHE_HOME", tmp.path + "/cache"}};
  std::string sqrt_rule = tmp.path + "/sqrt.yaml";
  testsupport::spit(sqrt_rule, kSqrtRule);
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--venv", venv.root});
    args.insert(args.end(), {"--rules", sqrt_rule});
    return testsupport::run_sitepatch(args, vars);
  };
  // Nothing kept yet: no TORCH column, and audit flags the square root.
  CHECK(sitepatch::util::starts_with(sp({"rules"}).out, "ID  "));
  CHECK(sp({"rules"}).out.find("TORCH") == std::string::npos);
  auto before = nlohmann::json::parse(sp({"--json", "audit", "itemuser.ops:scale"}).out);
  CHECK(before["chains"].size() == 2);
  CHECK(before["calibration"] == nullptr);

  auto c = sp({"rules", "--calibrate"});
  INFO(c.err);
  REQUIRE(c.status == 0);
  // And what this torch's dynamo holds as a constant, for explain --run.
  CHECK(c.err.find("what dynamo holds as a constant under assume_constant_result (explain --run asks this):\n"
                   "  held: device, device.index, device.type, dim(), dtype, ") != std::string::npos);
  CHECK(c.err.find("\n  held while sizes stay: shape unpacked, shape[i], size()\n") != std::string::npos);
  CHECK(c.err.find("torch 2.13.0+cpu: 3 traced, 40 break, 0 not run, in ") != std::string::npos);
  CHECK(c.out.find("tensor-item                      traced            torch.Tensor.item") != std::string::npos);
  CHECK(c.out.find("sqrt                             traced            math.sqrt") != std::string::npos);
  CHECK(c.out.find("subprocess                       breaks            subprocess.*") != std::string::npos);
  CHECK(c.out.find("torch-cpp-extension-load         -                 ") != std::string::npos);  // no probe
  REQUIRE(std::filesystem::exists(tmp.path + "/cache/sitepatch/calibration"));

  auto listed = nlohmann::json::parse(sp({"--json", "rules"}).out);
  CHECK(listed["torch"] == "2.13.0+cpu");
  for (auto& r : listed["rules"]) {
    if (r["id"] == "tensor-item") CHECK(r["calibration"] == "traced");
    if (r["id"] == "subprocess") {
      CHECK(r["calibration"] == "breaks");
      CHECK(sitepatch::util::starts_with(r["why"].get<std::string>(), "Unsupported: "));
    }
  }

  // audit: the square root is no break under this torch: left out, said so.
  auto text = sp({"audit", "itemuser.ops:scale"});
  CHECK(text.out.find("[1] subprocess.run") != std::string::npos);
  CHECK(text.out.find("math.sqrt") == std::string::npos);
  CHECK(text.err.find("not flagged: importlib-find-spec, tensor-item, sqrt (traced by torch 2.13.0+cpu in this environment, as `sitepatch "
                      "rules --calibrate` found)\n") != std::string::npos);
  auto after = nlohmann::json::parse(sp({"--json", "audit", "itemuser.ops:scale"}).out);
  CHECK(after["chains"].size() == 1);
  CHECK(after["calibration"] == nlohmann::json({{"torch", "2.13.0+cpu"}, {"traced", {"importlib-find-spec", "tensor-item", "sqrt"}}}));

  // A rules file that changes the probe: the kept answer was for another probe.
  std::string mine = tmp.path + "/mine.yaml";
  testsupport::spit(mine, "rules:\n  - id: sqrt\n    match: math.sqrt\n    category: math\n"
                          "    message: takes a square root\n    probe: math.sqrt(9.0)\n");
  auto with_mine = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--venv", venv.root});
    args.insert(args.end(), {"--rules", mine});
    return testsupport::run_sitepatch(args, vars);
  };
  CHECK(with_mine({"rules"}).out.find("sqrt                             -                 ") != std::string::npos);
  CHECK(nlohmann::json::parse(with_mine({"--json", "audit", "itemuser.ops:scale"}).out)["chains"].size() == 2);

  // A calibration in a folder another user can write could hide any rule: not used.
  std::filesystem::permissions(tmp.path + "/cache/sitepatch/calibration", std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  auto unsafe = sp({"--json", "audit", "itemuser.ops:scale"});
  CHECK(nlohmann::json::parse(unsafe.out)["calibration"] == nullptr);
  CHECK(nlohmann::json::parse(unsafe.out)["chains"].size() == 2);
  CHECK(unsafe.err.find("not using the calibration kept in " + tmp.path + "/cache/sitepatch/calibration/") !=
        std::string::npos);
}

TEST_CASE("rules --calibrate refuses an environment without torch, naming it", "[e2e][audit]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  auto r = testsupport::run_sitepatch({"--venv", venv.root, "rules", "--calibrate"}, {{"XDG_CACHE_HOME", tmp.path}});
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: error: torch is not installed in " + venv.root +
                   ": there is no dynamo to calibrate against\n") != std::string::npos);
}

TEST_CASE("remote: rules --calibrate runs the probes on the host, and audit there leaves out what it traces",
          "[e2e][remote][audit][torch]") {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(sshd.local("/srv/model/.venv"));
  std::string rule = tmp.path + "/sqrt.yaml";
  testsupport::spit(rule, kSqrtRule);
  venv.install(testsupport::build_wheel({"itemuser", "1.0", {{"itemuser/__init__.py", ""}, {"itemuser/ops.py", kUser}}},
                                        tmp.path + "/wheels"));
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/model/.venv"});
    args.insert(args.end(), {"--rules", rule});
    return testsupport::run_sitepatch(args, {{"XDG_CACHE_HOME", tmp.path + "/cache"}});
  };
  auto c = sp({"rules", "--calibrate"});
  INFO(c.err);
  REQUIRE(c.status == 0);
  CHECK(c.err.find("torch 2.13.0+cpu: 3 traced, 40 break, 0 not run, in ") != std::string::npos);
  auto after = nlohmann::json::parse(sp({"--json", "audit", "itemuser.ops:scale"}).out);
  CHECK(after["chains"].size() == 1);
  CHECK(after["calibration"]["traced"] == nlohmann::json::array({"importlib-find-spec", "tensor-item", "sqrt"}));
}

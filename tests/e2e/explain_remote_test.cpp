// explain on another machine: the log is read here, the frames are placed in the
// remote environment through the agent (one connection), and the answer is the one a
// local environment gives.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/sshd.hpp"

TEST_CASE("remote: explain places the log's frames in the environment on the host", "[e2e][remote][explain]") {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  testsupport::Venv venv = testsupport::Venv::create(sshd.local("/srv/model/.venv"));
  venv.install({e2e::data_wheel("fakeinfer", "0.1.0", tmp.path), e2e::data_wheel("torch", "2.9.0", tmp.path)});
  REQUIRE_FALSE(std::filesystem::exists("/srv/model/.venv"));
  std::string log = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/graph_breaks.txt";
  std::string recipe = tmp.path + "/fix.yaml";
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/model/.venv"});
    return testsupport::run_sitepatch(args);
  };

  int before = sshd.connections();
  auto r = sp({"explain", log, "--recipe", recipe});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(sshd.connections() == before + 1);
  CHECK(r.out.find("    your code at model.py:8 (forward) calls into fakeinfer 0.1.0:\n"
                   "      fakeinfer.jit.cpp_ext:is_cuda_version_at_least  function          fakeinfer 0.1.0  "
                   "fakeinfer/jit/cpp_ext.py:31\n") != std::string::npos);
  CHECK(r.out.find("    fix: add-decorator torch.compiler.disable on fakeinfer.fp4_quantization:fp4_quantize\n") !=
        std::string::npos);

  // The recipe written here plans and applies there.
  auto plan = sp({"plan", recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);
  CHECK(plan.out.find("+    return Version(torch.version.cuda)\n") != std::string::npos);
  auto apply = sp({"apply", recipe});
  INFO(apply.err);
  CHECK(apply.status == 0);
  CHECK(testsupport::slurp(venv.site_packages + "/fakeinfer/fp4_quantization.py").find("@torch.compiler.disable\ndef fp4_quantize(") !=
        std::string::npos);
}

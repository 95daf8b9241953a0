// explain on another machine: the log is read here, the frames are placed in the
// remote environment through the agent (one connection), and the answer is the one a
// local environment gives.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/sshd.hpp"
#include "support/torch_env.hpp"

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

TEST_CASE("remote: explain --run searches on the host: its runs happen there, several at once, one connection",
          "[e2e][remote][explain][torch]") {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  // The venv on the host sees the tests' torch through a .pth (the host shares this
  // machine's files outside /srv); the corpus' scale-file shape is installed in it.
  testsupport::Venv venv = testsupport::torch_venv(sshd.local("/srv/model/.venv"));
  std::string shape = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-corpus/scalefile";
  std::filesystem::copy(shape + "/site-packages", venv.site_packages, std::filesystem::copy_options::recursive);
  testsupport::spit(sshd.local("/srv/model/app/repro.py"),
                    "import torch\n\nimport scalefile\n\nf = torch.compile(lambda x: scalefile.quantize_kv(x), "
                    "backend=\"eager\", fullgraph=True)\nprint(f(torch.ones(4)).tolist())\n");
  std::string recipe = tmp.path + "/proven.yaml";
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(),
                {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/model/.venv"});
    return testsupport::run_sitepatch(args);
  };
  int before = sshd.connections();
  // The script by its path on the host: plain words, so the runs start warm there (a
  // `cd ... &&` would make each run a cold Python, 3 s of torch's import apiece).
  auto r = sp({"--json", "explain", "--run", "python /srv/model/app/repro.py", "--jobs", "2", "--oversubscribe",
               "--recipe", recipe});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  CHECK(sshd.connections() == before + 1);
  auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> kept;
  for (auto& k : j["kept"]) kept.push_back(k["describe"]);
  CHECK(kept == std::vector<std::string>{"assume_constant_result on scalefile:_capability",
                                         "assume_constant_result on scalefile:load_scales"});
  // Two candidates per break ran at once on the host: the probe's and the custom op of
  // the function around it; the narrower was kept, the other said so.
  CHECK(j["runs"][1]["batch"] == 2);
  CHECK(j["runs"][2]["batch"] == 2);
  CHECK(j["runs"][2]["verdict"].get<std::string>().find("but assume_constant_result on scalefile:_capability is "
                                                        "narrower") != std::string::npos);
  // The last kept run compiled; the one after it checked the first fix is needed.
  const nlohmann::json* last = nullptr;
  for (auto& run : j["runs"])
    if (run["kept"].get<bool>()) last = &run;
  REQUIRE(last);
  CHECK((*last)["counts"]["compiled"] == true);
  CHECK(j["runs"].back()["minimizing"] == true);
  CHECK(j["runs"].back()["verdict"] == "needed: without it dynamo stops again (fullgraph=True fails)");
  for (auto& run : j["runs"]) CHECK(run["start"] == "warm");
  // The recipe written here applies there, and the repro compiles there.
  auto apply = sp({"apply", recipe});
  INFO(apply.err);
  REQUIRE(apply.status == 0);
  auto plain = sitepatch::util::run({"sh", "-c", "cd \"$0\" && exec \"$1\" repro.py", sshd.local("/srv/model/app"),
                                     venv.python});
  CHECK(plain.status == 0);
}

TEST_CASE("remote: explain --run's runs start warm on the host, the server there, through the one connection",
          "[e2e][remote][explain][torch][warm]") {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  testsupport::Venv venv = testsupport::torch_venv(sshd.local("/srv/model/.venv"));
  std::string shape = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-corpus/envread";
  std::filesystem::copy(shape + "/site-packages", venv.site_packages, std::filesystem::copy_options::recursive);
  testsupport::spit(sshd.local("/srv/model/app/repro.py"),
                    "import torch\n\nimport envread\n\nf = torch.compile(lambda x: envread.scaled(x), "
                    "backend=\"eager\", fullgraph=True)\nprint(f(torch.ones(4)).tolist())\n");
  int before = sshd.connections();
  auto r = testsupport::run_sitepatch({"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv",
                                       "/srv/model/.venv", "--json", "explain", "--run",
                                       "python /srv/model/app/repro.py", "--jobs", "2"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  CHECK(sshd.connections() == before + 1);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["kept"].size() == 1);
  CHECK(j["kept"][0]["describe"] == "assume_constant_result on envread:threads");
  for (auto& run : j["runs"])
    if (!run["counts"]["status"].is_null() && run["verdict"].get<std::string>().rfind("not applicable", 0) != 0)
      CHECK(run["start"] == "warm");
}

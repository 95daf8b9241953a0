// audit on another machine: the files are read through the agent over one ssh
// connection, in a few batches; the analysis runs here and prints what it prints
// for a local environment.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.hpp"
#include "support/sshd.hpp"

TEST_CASE("remote: audit reads the environment through the host, one connection", "[e2e][remote][audit]") {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  testsupport::Venv venv = testsupport::Venv::create(sshd.local("/srv/venv"));
  venv.install({e2e::data_wheel("demo-jit", "1.0", tmp.path), e2e::data_wheel("jitbase", "2.0", tmp.path)});
  REQUIRE_FALSE(std::filesystem::exists("/srv/venv"));
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/venv"});
    return testsupport::run_sitepatch(args);
  };
  auto trips = [](const std::string& err) {
    auto at = err.find(" round trip(s)");
    auto from = err.rfind(", ", at);
    return std::stoi(err.substr(from + 2, at - from - 2));
  };

  int before = sshd.connections();
  auto r = sp({"-v", "audit", "demo.api:quantize"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("[2] subprocess.run (process, error: spawns a process, which dynamo cannot trace) [subprocess: docs/guide/rules.md#subprocess]\n"
                   "    demo.api:quantize             demo/api.py:6\n"
                   "    demo.jit.spec:get_module      demo/jit/spec.py:12\n"
                   "    demo.jit.loader:Loader.load   demo/jit/loader.py:21\n"
                   "    demo.jit.loader:Base.compile  demo/jit/loader.py:13\n"
                   "    jitbase.tools:run_compiler    jitbase/tools.py:6\n") != std::string::npos);
  CHECK(sshd.connections() == before + 1);
  // hello, one read per wave of the walk (modules it reaches, not the whole environment),
  // and the search for subclasses across the walked packages: the owners of the
  // packages, each owner's RECORD, and one read of the class statements; and one listing
  // of the site folder, for whether a module a call goes into is installed at all.
  CHECK(trips(r.err) <= 10);

  auto scan = sp({"-v", "audit", "--package", "demo-jit"});
  INFO(scan.err);
  REQUIRE(scan.status == 0);
  CHECK(scan.out.find("demo/jit/spec.py:16:5: warning: demo.jit.spec:prepare: open [file-io] [open: docs/guide/rules.md#open]\n") != std::string::npos);
  CHECK(scan.out.find("4 flagged calls in 3 functions and 1 at module level in 2 files of 5") != std::string::npos);
  CHECK(sshd.connections() == before + 2);
  // hello, the dist-info listing and its METADATA/RECORD, one read of every source.
  CHECK(trips(scan.err) <= 5);

  // --path over ssh walks the remote folder, not a local one.
  auto path = sp({"audit", "--path", "/srv/venv/lib"});
  INFO(path.err);
  REQUIRE(path.status == 0);
  CHECK(path.out.find("/site-packages/jitbase/tools.py:6:12: ") != std::string::npos);
}

// Diffs on a terminal go through the user's pager ($SITEPATCH_PAGER, $PAGER, less -FRX),
// as git sends them; --no-pager, a pipe and --json print directly. script(1) gives the
// command a real terminal, as a user's shell would.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

using testsupport::slurp;

namespace {

struct Paged {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  std::string paged = env.tmp.path + "/paged";

  /// `vars` and `tail` (after the sitepatch words, e.g. "| cat") are shell text.
  sitepatch::util::RunResult on_tty(const std::string& vars, const std::string& args, const std::string& tail = "") {
    std::string cmd = "env -u NO_COLOR -u LESS -u PAGER TERM=xterm " + vars + " " + SITEPATCH_BIN + " --venv " +
                      env.venv.root + " " + args + " " + tail;
    return sitepatch::util::run({"script", "-qec", cmd, "/dev/null"});
  }
  std::string pager_to_file() const { return "SITEPATCH_PAGER=" + sitepatch::util::shell_quote("cat > " + paged); }
};

}  // namespace

TEST_CASE("pager: plan, show and log -p on a terminal go through $SITEPATCH_PAGER, colour kept", "[e2e][pager]") {
  Paged t;
  auto plan = t.on_tty(t.pager_to_file(), "plan " + t.recipe);
  INFO(plan.out);
  CHECK(plan.status == 0);
  std::string got = slurp(t.paged);
  // The pager got the diff, coloured since the terminal is still the reader, and the
  // edit lines after it (stderr is the terminal too); the terminal itself got none.
  CHECK(got.find("\x1b[32m+    return Version(torch.version.cuda)") != std::string::npos);
  CHECK(got.find("  flashinfer-dynamo  flashinfer.jit.cpp_ext:get_cuda_version") > got.find("+    return Version"));
  CHECK(plan.out.find("return Version") == std::string::npos);

  REQUIRE(t.env.sp({"apply", t.recipe}).status == 0);
  for (std::string args : {"show flashinfer-dynamo", "log -p", "rollback --dry-run --all"}) {
    std::filesystem::remove(t.paged);
    auto r = t.on_tty(t.pager_to_file(), args);
    INFO(args << "\n" << r.out);
    CHECK(r.status == 0);
    CHECK(slurp(t.paged).find("def get_cuda_version() -> Version:") != std::string::npos);
    CHECK(r.out.find("def get_cuda_version() -> Version:") == std::string::npos);
  }

  // $PAGER when SITEPATCH_PAGER is unset; less gets LESS=FRX unless the user set LESS.
  std::filesystem::remove(t.paged);
  auto env_pager = t.on_tty("PAGER=" + sitepatch::util::shell_quote("printenv LESS > " + t.paged + "; cat >/dev/null"),
                            "show flashinfer-dynamo");
  CHECK(env_pager.status == 0);
  CHECK(slurp(t.paged) == "FRX\n");
  auto own_less = t.on_tty("LESS=R PAGER=" + sitepatch::util::shell_quote("printenv LESS > " + t.paged + "; cat >/dev/null"),
                           "show flashinfer-dynamo");
  CHECK(slurp(t.paged) == "R\n");
}

TEST_CASE("pager: --no-pager, a pipe, --json, an empty or cat pager print directly", "[e2e][pager]") {
  Paged t;
  REQUIRE(t.env.sp({"apply", t.recipe}).status == 0);
  auto direct = [&](const std::string& vars, const std::string& args, const std::string& tail = "") {
    std::filesystem::remove(t.paged);
    auto r = t.on_tty(vars, args, tail);
    INFO(vars << " " << args << " " << tail << "\n" << r.out);
    CHECK(r.status == 0);
    CHECK_FALSE(std::filesystem::exists(t.paged));
    return r.out;
  };
  CHECK(direct(t.pager_to_file(), "--no-pager show flashinfer-dynamo").find("def get_cuda_version") != std::string::npos);
  CHECK(direct(t.pager_to_file(), "show --no-pager flashinfer-dynamo").find("def get_cuda_version") != std::string::npos);
  // Through a pipe the reader is a program: no pager, and no colour either.
  std::string piped = direct(t.pager_to_file(), "show flashinfer-dynamo", "| cat");
  CHECK(piped.find("def get_cuda_version") != std::string::npos);
  CHECK(piped.find("\x1b[") == std::string::npos);
  CHECK(direct(t.pager_to_file(), "--json show flashinfer-dynamo").find("\"diff\"") != std::string::npos);
  CHECK(direct("SITEPATCH_PAGER= PAGER=" + sitepatch::util::shell_quote("cat > " + t.paged), "show flashinfer-dynamo")
            .find("def get_cuda_version") != std::string::npos);
  CHECK(direct("SITEPATCH_PAGER=cat", "show flashinfer-dynamo").find("def get_cuda_version") != std::string::npos);
  // Output that is no diff is never paged.
  CHECK(direct(t.pager_to_file(), "log").find("apply flashinfer-dynamo") != std::string::npos);
}

TEST_CASE("pager: one the user quits at once costs no write and no error", "[e2e][pager]") {
  Paged t;
  // A diff far larger than a pipe holds: printing it after the pager left meets a
  // closed pipe (EPIPE), which must not kill the command or change its exit status.
  std::string body;
  for (int i = 0; i < 4000; ++i)
    body += "    value_" + std::to_string(i) + " = \"" + std::string(40, 'x') + "\"\n";
  testsupport::WheelSpec spec{"bigpkg", "1.0", {{"bigpkg/__init__.py", "def huge():\n" + body + "    return 0\n"}}};
  t.env.venv.install(testsupport::build_wheel(spec, t.env.tmp.path + "/wheels"));
  std::string recipe = t.env.recipe("big.yaml", "id: big\nedits:\n  - module: bigpkg\n    function: huge\n"
                                                "    replace-body: |\n      return 1\n");
  auto r = t.on_tty("SITEPATCH_PAGER=true", "apply " + recipe);
  INFO(r.out);
  CHECK(r.status == 0);
  // The apply was written and recorded before a line was printed.
  CHECK(t.env.sp({"verify", "big"}).status == 0);
  CHECK(t.env.venv.run_python("import bigpkg; print(bigpkg.huge())").out == "1\n");
  auto rb = t.on_tty("SITEPATCH_PAGER='exec <&-; sleep 0.2'", "rollback big");
  CHECK(rb.status == 0);
  CHECK(t.env.sp({"list"}).out.find("big") == std::string::npos);
}

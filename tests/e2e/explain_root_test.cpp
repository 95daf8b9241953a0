// explain (and the commands beside it) as root on what another user can write (issue 48):
// a log's name, its lines, the files its frames name, the folders the output goes to.
// That user is uid 65534 (`nobody`): files it owns (chown), links it makes (setpriv).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_support.hpp"
#include "sitepatch/recipe/recipe.hpp"

namespace fs = std::filesystem;
using sitepatch::util::RunResult;

// Names of its own: the unity build puts this file beside explain_test.cpp.
namespace {

constexpr uid_t kAttacker = 65534;

std::string dynamo_log(const std::string& name) {
  return std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/" + name;
}

// torch's stand-in with the one name fakeinfer's annotations need at import.
std::string torch_stub_wheel(const std::string& out) {
  auto files = e2e::read_tree(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/torch-2.9.0");
  files["torch/__init__.py"] += "\n\nclass Tensor:\n    pass\n";
  return testsupport::build_wheel({"torch", "2.9.0", files}, out);
}

// fakeinfer as the logs in tests/data/dynamo-logs saw it, in a venv root owns.
struct RootExplainEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  RootExplainEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    venv.install({e2e::data_wheel("fakeinfer", "0.1.0", tmp.path + "/wheels"), torch_stub_wheel(tmp.path + "/wheels")});
  }
  RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  /// A folder anyone may make entries in, as /tmp is, that the other user reaches.
  std::string shared(const std::string& name) const {
    REQUIRE(::chmod(tmp.path.c_str(), 0755) == 0);
    std::string path = tmp.path + "/" + name;
    fs::create_directories(path);
    REQUIRE(::chmod(path.c_str(), 01777) == 0);
    return path;
  }
  /// A folder only root may enter, holding `file` with root's bytes.
  std::string private_file(const std::string& file) const {
    std::string dir = tmp.path + "/private";
    testsupport::spit(dir + "/" + file, "root's own\n");
    REQUIRE(::chmod(dir.c_str(), 0700) == 0);
    return dir + "/" + file;
  }
};

/// Runs `command` as the other user (setpriv), as their own process would.
void as_attacker(const std::string& command) {
  auto r = sitepatch::util::run({"setpriv", "--reuid=" + std::to_string(kAttacker), "--regid=" + std::to_string(kAttacker),
                                 "--clear-groups", "--", "sh", "-c", command});
  INFO(r.err);
  REQUIRE(r.status == 0);
}

}  // namespace

TEST_CASE("a log named with line breaks and YAML adds nothing to the recipe explain writes", "[e2e][explain][root]") {
  REQUIRE(::geteuid() == 0);
  RootExplainEnv env;
  // The other user's log in a shared folder, named so that, spliced raw, it ends the
  // comment and the description and lists an edit of another package.
  std::string logs = env.shared("logs");
  std::string name = "g.txt\n  - module: json\n    function: dumps\n    replace-body: |\n      import os\n"
                     "edits:\n- module: json\n  function: loads\n  replace-body: pass\n#\r";
  std::string log = logs + "/" + name;
  fs::copy_file(dynamo_log("graph_breaks.txt"), log);
  REQUIRE(::chown(log.c_str(), kAttacker, kAttacker) == 0);
  std::string recipe = env.tmp.path + "/fix.yaml";
  auto r = env.sp({"explain", log, "--recipe", recipe});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find("wrote " + recipe + " (2 edits)") != std::string::npos);
  // No raw line break of the name is in the file: the description holds it whole, the
  // comment escaped, and the recipe reads back as the two edits proposed.
  std::string text = testsupport::slurp(recipe);
  INFO(text);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find("\n  - module: json") == std::string::npos);
  CHECK(text.find("# Proposed by `sitepatch explain '" + logs + "/g.txt\\x0a  - module: json\\x0a") == 0);
  auto parsed = sitepatch::recipe::parse(text, recipe);
  CHECK(parsed.description == "Let torch.compile through the graph breaks of " + sitepatch::util::printable(log));
  REQUIRE(parsed.edits.size() == 2);
  CHECK(parsed.edits[0].where() == "fakeinfer.jit.cpp_ext:get_cuda_version");
  CHECK(parsed.edits[1].where() == "fakeinfer.fp4_quantization:fp4_quantize");
  auto plan = env.sp({"plan", recipe});
  CHECK(plan.status == 0);
  CHECK(plan.err.find("json") == std::string::npos);
}

TEST_CASE("a break's reason with escapes and line separators stays inside its comment", "[e2e][explain][root]") {
  REQUIRE(::geteuid() == 0);
  RootExplainEnv env;
  // A break whose operation the log does not name: its reason is what the `# answers`
  // comment quotes, and what the report prints. ESC is allowed in a log line (OSC 52
  // writes root's clipboard); NEL and U+2028 break lines in YAML 1.1.
  std::string text = testsupport::slurp(dynamo_log("graph_breaks.txt"));
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace_all("qualname: allocate_lock,", "qualname: -,");
  replace_all("the builtin `_thread.allocate_lock.`", "the builtin (a lock)");
  replace_all("Attempted to call function marked as skipped",
              "Attempted to call function marked as skipped\x1b]52;c;ZXZpbA==\x1b\\\xc2\x85id: evil\xe2\x80\xa8id: evil2");
  std::string log = env.tmp.path + "/esc.txt";
  testsupport::spit(log, text);
  std::string recipe = env.tmp.path + "/fix.yaml";
  auto r = env.sp({"explain", log, "--recipe", recipe});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find("dynamo: Attempted to call function marked as skipped\\x1b]52;c;ZXZpbA==\\x1b\\\\xc2\\x85id: evil") !=
        std::string::npos);
  std::string written = testsupport::slurp(recipe);
  INFO(written);
  CHECK(written.find('\x1b') == std::string::npos);
  CHECK(written.find("  # answers [1] Attempted to call function marked as skipped\\x1b]52;c;ZXZpbA==\\x1b\\\\xc2\\x85id: "
                     "evil\\u2028id: evil2 through subprocess.check_output") != std::string::npos);
  CHECK(sitepatch::recipe::parse(written, recipe).edits.size() == 2);
}

TEST_CASE("output files are refused through another user's link: explain --recipe, audit --callgraph, capture -o",
          "[e2e][explain][root]") {
  REQUIRE(::geteuid() == 0);
  RootExplainEnv env;
  std::string shared = env.shared("shared");
  std::string secret = env.private_file("fix.yaml");
  testsupport::spit(env.tmp.path + "/private/graph.json", "root's own\n");
  std::string folder = fs::path(secret).parent_path().string();
  // The other user plants a link to root's private folder in the shared one.
  as_attacker("ln -s " + sitepatch::util::shell_quote(folder) + " " + sitepatch::util::shell_quote(shared + "/out"));
  std::string why = shared + "/out belongs to uid 65534, another user";

  auto e = env.sp({"explain", dynamo_log("graph_breaks.txt"), "--recipe", shared + "/out/fix.yaml"});
  CHECK(e.status == 2);
  CHECK(e.err == "sitepatch: error: --recipe " + shared + "/out/fix.yaml: " + why +
                     "; write the recipe into a folder only you can change\n");
  auto a = env.sp({"audit", "fakeinfer.jit.cpp_ext:get_cuda_version", "--callgraph", shared + "/out/graph.json"});
  CHECK(a.status == 2);
  CHECK(a.err == "sitepatch: error: --callgraph " + shared + "/out/graph.json: " + why +
                     "; write the call graph into a folder only you can change\n");
  auto c = env.sp({"capture", "fakeinfer", "-o", shared + "/out/new.yaml"});
  CHECK(c.status == 2);
  CHECK(c.err == "sitepatch: error: -o " + shared + "/out/new.yaml: " + why +
                     "; write the recipe into a folder only you can change\n");
  // A link at the file's own name, in a sticky folder: the entry is theirs.
  as_attacker("ln -s " + sitepatch::util::shell_quote(secret) + " " + sitepatch::util::shell_quote(shared + "/fix.yaml"));
  auto l = env.sp({"explain", dynamo_log("graph_breaks.txt"), "--recipe", shared + "/fix.yaml"});
  CHECK(l.status == 2);
  CHECK(l.err == "sitepatch: error: --recipe " + shared + "/fix.yaml: " + shared +
                     "/fix.yaml belongs to uid 65534, another user; write the recipe into a folder only you can "
                     "change\n");
  CHECK(testsupport::slurp(secret) == "root's own\n");
  CHECK(testsupport::slurp(folder + "/graph.json") == "root's own\n");
  CHECK(!fs::exists(folder + "/new.yaml"));

  // Root's own folder is written, through the folder it checked.
  auto ok = env.sp({"audit", "fakeinfer.jit.cpp_ext:get_cuda_version", "--callgraph", folder + "/graph.json"});
  INFO(ok.err);
  CHECK(testsupport::slurp(folder + "/graph.json").find("\"entry\"") != std::string::npos);
}

TEST_CASE("explain quotes no file a log names outside site-packages or that is no Python source", "[e2e][explain][root]") {
  REQUIRE(::geteuid() == 0);
  RootExplainEnv env;
  // Root's secrets: a source only root may read, and root's environment (/proc/self/environ).
  std::string secret = env.private_file("secret.py");
  testsupport::spit(secret, "TOKEN = 'root-only-token'\n");
  REQUIRE(::chmod(secret.c_str(), 0600) == 0);
  // And a user script that is a link to /proc/self/environ, named model.py.
  std::string app = env.tmp.path + "/app";
  fs::create_directories(app);
  fs::create_symlink("/proc/self/environ", app + "/model.py");
  std::string site = "/srv/model/.venv/lib/python3.12/site-packages";
  auto log_with = [&](const std::string& user_file, const std::string& library_file) {
    return std::string(
               "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
               "  Developer debug context: module: _thread, qualname: allocate_lock, skip reason: <missing reason>\n"
               "\n"
               "from user code:\n"
               "   File \"") + user_file + "\", line 1, in <module>\n"
           "    x = 1\n"
           "  File \"" + library_file + "\", line 1, in <module>\n"
           "    y = 2\n"
           "  File \"" + site + "/fakeinfer/jit/cpp_ext.py\", line 19, in get_cuda_version\n"
           "    txt = subprocess.check_output([nvcc, \"--version\"], text=True)\n"
           "  File \"/usr/lib/python3.12/subprocess.py\", line 466, in check_output\n"
           "    return run(*popenargs, stdout=PIPE, timeout=timeout, check=True,\n";
  };
  std::string up = site + "/../../../../../../../../../..";
  struct Case {
    std::string user, library, said;
  };
  std::vector<Case> cases = {
      {"/proc/self/environ", up + secret,
       "/proc/self/environ is not read (not a Python source (.py)), so the walks start at the library"},
      {app + "/model.py", up + secret,
       app + "/model.py is not read (it leads to /proc/"},
  };
  for (auto& c : cases) {
    std::string log = env.tmp.path + "/log.txt";
    testsupport::spit(log, log_with(c.user, c.library));
    auto r = testsupport::run_sitepatch({"--venv", env.venv.root, "explain", log}, {{"SECRET_TOKEN", "root-env-token"}});
    INFO(r.out << r.err);
    CHECK(r.status == 3);
    CHECK(r.out.find("root-only-token") == std::string::npos);
    CHECK(r.out.find("root-env-token") == std::string::npos);
    CHECK(r.out.find(c.said) != std::string::npos);
    CHECK(r.out.find("../../../../../../../../../.." + secret +
                     " leaves site-packages, so it is not read (a frame's file is below a site folder)") !=
          std::string::npos);
  }
}

TEST_CASE("rules and hints files another user could change are code, and refused", "[e2e][explain][root]") {
  REQUIRE(::geteuid() == 0);
  RootExplainEnv env;
  std::string shared = env.shared("shared");
  std::string witness = env.tmp.path + "/ran";
  // The other user's rules file, whose probe would run as root under rules --calibrate,
  // and hints file, whose body explain --run would run before any run.
  as_attacker("printf '%s' " +
           sitepatch::util::shell_quote("rules:\n  - id: sqrt\n    match: math.sqrt\n    category: math\n"
                                        "    message: takes a square root\n    probe: open('" + witness +
                                        "', 'w').write('root')\n") +
           " > " + shared + "/rules.yaml");
  as_attacker("printf '%s' " +
           sitepatch::util::shell_quote("hints:\n  - id: h\n    calls: subprocess.*\n    holds: [nvcc]\n"
                                        "    replace-body: \"open('" + witness + "', 'w').write('root')\"\n") +
           " > " + shared + "/hints.yaml");
  std::string why = shared + "/rules.yaml belongs to uid 65534, another user";
  auto rules = env.sp({"rules", "--rules", shared + "/rules.yaml", "--calibrate"});
  CHECK(rules.status == 1);
  CHECK(rules.err == "sitepatch: error: refusing to read the rules file " + shared + "/rules.yaml: " + why +
                         ", who could make it run their code as you (rules --calibrate runs each rule's probe); keep "
                         "it where only you can write\n");
  auto hints = env.sp({"explain", "--run", "true", "--hints", shared + "/hints.yaml"});
  CHECK(hints.status == 1);
  CHECK(hints.err == "sitepatch: error: refusing to read the hints file " + shared + "/hints.yaml: " + shared +
                         "/hints.yaml belongs to uid 65534, another user, who could make it run their code as you "
                         "(explain --run runs a hint's body); keep it where only you can write\n");
  CHECK(!fs::exists(witness));
  // The same files, root's own in root's folder, are read.
  fs::copy_file(shared + "/hints.yaml", env.tmp.path + "/hints.yaml");
  auto own = env.sp({"explain", "--list-hints", "--hints", env.tmp.path + "/hints.yaml"});
  INFO(own.err);
  CHECK(own.status == 0);
  CHECK(own.out.find("\nh ") != std::string::npos);
}

TEST_CASE("a METADATA Version with escapes reaches neither the terminal nor requires:", "[e2e][explain][root]") {
  REQUIRE(::geteuid() == 0);
  RootExplainEnv env;
  // A wheel's METADATA is its maker's text; the Version's ESC sequence (OSC 52) was
  // printed as is and copied into the recipe's requires:.
  std::string meta;
  for (auto& e : fs::directory_iterator(env.venv.site_packages))
    if (e.path().filename().string().rfind("fakeinfer-", 0) == 0) meta = e.path().string() + "/METADATA";
  REQUIRE(!meta.empty());
  std::string text = testsupport::slurp(meta);
  size_t at = text.find("Version: 0.1.0\n");
  REQUIRE(at != std::string::npos);
  text.replace(at, 15, "Version: 0.1.0\x1b]52;c;eA==\x1b\\\n");
  testsupport::spit(meta, text);
  std::string recipe = env.tmp.path + "/fix.yaml";
  auto r = env.sp({"explain", dynamo_log("graph_breaks.txt"), "--recipe", recipe});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find("fakeinfer 0.1.0\\x1b]52;c;eA==\\x1b\\") != std::string::npos);
  std::string written = testsupport::slurp(recipe);
  INFO(written);
  CHECK(written.find('\x1b') == std::string::npos);
  CHECK(written.find("requires:") == written.find("requires: given"));
  CHECK(written.find("\n# fakeinfer 0.1.0\\x1b]52;c;eA==\\x1b\\ is no PEP 508 name and PEP 440 version: no requires: "
                     "given\n") != std::string::npos);
  CHECK(written.find("\nid: dynamo-get-cuda-version-fp4-quantize\n") != std::string::npos);
}

// Every state has a way out (issue 49, items 2, 5, 8): a hotfix on the statement next to
// a patched one is "changed by others", never "the edit is gone"; a rollback keeps it
// and takes out only sitepatch's lines; two recipes on neighbouring statements, or
// sharing an import, roll back one at a time; and every status verdict's command,
// run as status prints it, leaves an environment status calls healthy.
#include <catch2/catch.hpp>

#include <sstream>

#include "e2e_support.hpp"
#include "sitepatch/util/strings.hpp"

namespace {

const char* kAdapters =
    "\"\"\"Adapters.\"\"\"\n"
    "import os\n"
    "\n"
    "DEFAULT_POOLBLOCK = False\n"
    "DEFAULT_POOLSIZE = 10\n"
    "DEFAULT_RETRIES = 0\n"
    "\n"
    "\n"
    "class HTTPAdapter:\n"
    "    def __init__(self, pool_connections=DEFAULT_POOLSIZE):\n"
    "        # Defaults for every pool\n"
    "        self.max_retries = DEFAULT_RETRIES\n"
    "        self.pool_connections = pool_connections\n"
    "        self.config = {}\n"
    "\n"
    "    def send(self, request, timeout=None):\n"
    "        # Figure out the timeout\n"
    "        timeout = (timeout, timeout)\n"
    "        return request, timeout\n";

struct Pool {
  testsupport::TempDir tmp;
  testsupport::Venv venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string wheel = testsupport::build_wheel(
      {"poolkit", "1.0", {{"poolkit/__init__.py", ""}, {"poolkit/adapters.py", kAdapters}}}, tmp.path + "/wheels");
  std::string file = venv.site_packages + "/poolkit/adapters.py";
  Pool() { venv.install(wheel); }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  std::string recipe(const std::string& id, const std::string& edits) const {
    std::string path = tmp.path + "/" + id + ".yaml";
    testsupport::spit(path, "id: " + id + "\nedits:\n" + edits);
    return path;
  }
  std::string now() const { return testsupport::slurp(file); }
  /// The file with `from` (found once) made `to`.
  static std::string with(std::string text, const std::string& from, const std::string& to) {
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
  }
  void hand_edit(const std::string& from, const std::string& to) const { testsupport::spit(file, with(now(), from, to)); }
  /// Runs each command under status's "to fix:" as printed, then expects status to be content.
  void follow_status() const {
    auto st = sp({"status"});
    INFO(st.out);
    REQUIRE(st.status == 3);
    auto at = st.out.find("\nto fix:\n");
    REQUIRE(at != std::string::npos);
    std::istringstream lines(st.out.substr(at + 9));
    std::string line;
    int ran = 0;
    while (std::getline(lines, line)) {
      line = line.substr(0, line.find("    #"));
      auto words = sitepatch::util::split(sitepatch::util::trim(line), ' ');
      REQUIRE(words.size() > 3);
      REQUIRE(words[0] == "sitepatch");
      words.erase(words.begin());
      auto r = testsupport::run_sitepatch(words);
      INFO(line << "\n" << r.err);
      CHECK(r.status == 0);
      ++ran;
    }
    CHECK(ran > 0);
    auto after = sp({"status"});
    INFO(after.out);
    CHECK(after.status == 0);
  }
};

const char* kRetries =
    "  - module: poolkit.adapters\n"
    "    function: HTTPAdapter.__init__\n"
    "    replace:\n"
    "      old: self.max_retries = DEFAULT_RETRIES\n"
    "      new: self.max_retries = 3\n";

}  // namespace

TEST_CASE("a hotfix on the line above a patched line: changed by others, adopt works, rollback keeps the hotfix",
          "[e2e][stuck]") {
  Pool p;
  REQUIRE(p.sp({"apply", p.recipe("retries", kRetries)}).status == 0);
  std::string patched = p.now();
  p.hand_edit("# Defaults for every pool", "# hotfix: more retries upstream");
  auto v = p.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out.find("poolkit/adapters.py was changed by someone else; the edit is still in it") != std::string::npos);
  CHECK(v.out.find("the edit is gone") == std::string::npos);
  auto st = p.sp({"status"});
  CHECK(st.out.find("  retries  changed by others\n") != std::string::npos);
  // A rollback now keeps their hotfix and takes out sitepatch's line.
  auto r = p.sp({"rollback", "retries"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::string hotfixed = Pool::with(kAdapters, "# Defaults for every pool", "# hotfix: more retries upstream");
  CHECK(p.now() == hotfixed);
  // Or: what status says to run (adopt) makes their change part of the patch, and the
  // rollback after it gives pip's bytes back, as adopt says.
  testsupport::spit(p.file, kAdapters);
  REQUIRE(p.sp({"apply", p.recipe("retries", kRetries)}).status == 0);
  p.hand_edit("# Defaults for every pool", "# hotfix: more retries upstream");
  p.follow_status();
  CHECK(p.now() == Pool::with(patched, "# Defaults for every pool", "# hotfix: more retries upstream"));
  REQUIRE(p.sp({"rollback", "retries"}).status == 0);
  CHECK(p.now() == kAdapters);
}

TEST_CASE("a hotfix on the line after a set-value: rollback without adopt takes out only sitepatch's line",
          "[e2e][stuck]") {
  Pool p;
  REQUIRE(p.sp({"apply", p.recipe("pool", "  - module: poolkit.adapters\n    variable: DEFAULT_POOLSIZE\n"
                                          "    set-value: '6'\n")})
              .status == 0);
  p.hand_edit("DEFAULT_RETRIES = 0", "DEFAULT_RETRIES = 2");
  auto st = p.sp({"status"});
  CHECK(st.status == 3);
  CHECK(st.out.find("  pool  changed by others\n") != std::string::npos);
  auto r = p.sp({"rollback", "pool"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(p.now() == Pool::with(kAdapters, "DEFAULT_RETRIES = 0", "DEFAULT_RETRIES = 2"));
  // The same change two lines away was always told apart; still is.
  REQUIRE(p.sp({"apply", p.recipe("pool", "  - module: poolkit.adapters\n    variable: DEFAULT_POOLSIZE\n"
                                          "    set-value: '6'\n")})
              .status == 0);
  p.hand_edit("self.config = {}", "self.config = {'hot': 1}");
  CHECK(p.sp({"status"}).out.find("  pool  changed by others\n") != std::string::npos);
}

TEST_CASE("two recipes on neighbouring variables roll back one at a time, in either order", "[e2e][stuck]") {
  for (bool first_block : {true, false}) {
    Pool p;
    std::string block = p.recipe("block", "  - module: poolkit.adapters\n    variable: DEFAULT_POOLBLOCK\n"
                                          "    set-value: 'True'\n");
    std::string size = p.recipe("size", "  - module: poolkit.adapters\n    variable: DEFAULT_POOLSIZE\n"
                                        "    set-value: '6'\n");
    REQUIRE(p.sp({"apply", block}).status == 0);
    REQUIRE(p.sp({"apply", size}).status == 0);
    auto r = p.sp({"rollback", first_block ? "block" : "size"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(p.now() == (first_block ? Pool::with(kAdapters, "DEFAULT_POOLSIZE = 10", "DEFAULT_POOLSIZE = 6")
                                  : Pool::with(kAdapters, "DEFAULT_POOLBLOCK = False", "DEFAULT_POOLBLOCK = True")));
    CHECK(p.sp({"verify"}).status == 0);
    REQUIRE(p.sp({"rollback", first_block ? "size" : "block"}).status == 0);
    CHECK(p.now() == kAdapters);
  }
}

TEST_CASE("two recipes sharing an ensure-import: the import stays while one that uses it is applied",
          "[e2e][stuck]") {
  Pool p;
  std::string adds = p.recipe("adds", "  - module: poolkit.adapters\n    function: HTTPAdapter.send\n"
                                      "    replace-body: return request, shutil.which('nvcc')\n"
                                      "    ensure-import: import shutil\n");
  std::string finds = p.recipe("finds", "  - module: poolkit.adapters\n    variable: DEFAULT_RETRIES\n"
                                        "    set-value: len(shutil.__name__)\n    ensure-import: import shutil\n");
  REQUIRE(p.sp({"apply", adds}).status == 0);
  REQUIRE(p.sp({"apply", finds}).status == 0);
  REQUIRE(p.now().find("import shutil\n") != std::string::npos);
  auto r = p.sp({"rollback", "adds"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(p.now() == Pool::with(Pool::with(kAdapters, "import os\n", "import os\nimport shutil\n"),
                              "DEFAULT_RETRIES = 0", "DEFAULT_RETRIES = len(shutil.__name__)"));
  CHECK(p.sp({"verify"}).status == 0);
  CHECK(p.venv.run_python("import poolkit.adapters as a; print(a.DEFAULT_RETRIES)").out == "6\n");
  // The import is the remaining recipe's now: its rollback takes it out.
  REQUIRE(p.sp({"rollback", "finds"}).status == 0);
  CHECK(p.now() == kAdapters);
}

TEST_CASE("status after a reinstall suggests one reapply --all for several patches, and it works", "[e2e][stuck]") {
  Pool p;
  REQUIRE(p.sp({"apply", p.recipe("retries", kRetries)}).status == 0);
  REQUIRE(p.sp({"apply", p.recipe("pool", "  - module: poolkit.adapters\n    variable: DEFAULT_POOLSIZE\n"
                                          "    set-value: '6'\n")})
              .status == 0);
  p.venv.install({"--force-reinstall", p.wheel});
  auto st = p.sp({"status"});
  CHECK(st.out.find("  sitepatch --venv " + p.venv.root + " reapply --all    # puts back the 2 patches above") !=
        std::string::npos);
  CHECK(st.out.find("reapply retries") == std::string::npos);
  p.follow_status();
}

TEST_CASE("status after an uninstall: the rollback it names forgets the patch", "[e2e][stuck]") {
  Pool p;
  REQUIRE(p.sp({"apply", p.recipe("retries", kRetries)}).status == 0);
  p.venv.uninstall("poolkit");
  p.follow_status();
  CHECK(p.sp({"list"}).out == "no patches applied in " + p.venv.root + "\n");
}

TEST_CASE("a failing plan shows no diff: apply would write none of it", "[e2e][stuck]") {
  Pool p;
  std::string r = p.recipe("half", std::string(kRetries) +
                                       "  - module: poolkit.adapters\n    function: HTTPAdapter.nope\n"
                                       "    prepend-body: x = 1\n");
  auto plan = p.sp({"plan", r});
  CHECK(plan.status == 1);
  CHECK(plan.out.empty());
  CHECK(plan.err.find("fails  half  poolkit.adapters:HTTPAdapter.nope") != std::string::npos);
}

TEST_CASE("capture takes pip's bytes from an earlier apply's saved original when no cache has them", "[e2e][stuck]") {
  Pool p;
  REQUIRE(p.sp({"apply", p.recipe("retries", kRetries)}).status == 0);
  REQUIRE(p.sp({"rollback", "retries"}).status == 0);
  p.hand_edit("self.config = {}", "self.config = {'pool': 'hot'}");
  // No cache anywhere: the history's copy of the original, which RECORD's hash vouches for.
  std::string out = p.tmp.path + "/captured.yaml";
  auto r = testsupport::run_sitepatch({"--venv", p.venv.root, "capture", "poolkit", "-o", out},
                                      {{"HOME", p.tmp.path}, {"XDG_CACHE_HOME", ""}, {"PIP_CACHE_DIR", ""}});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("the history (an earlier apply saved it)") != std::string::npos);
  CHECK(testsupport::slurp(out).find("self.config = {'pool': 'hot'}") != std::string::npos);
  REQUIRE(p.sp({"rollback", "poolkit-local"}).status == 0);
  CHECK(p.now() == kAdapters);
}

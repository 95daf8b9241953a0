// The write path as root meets it: stuck states cleaned by the next command, all or
// nothing when a file cannot be replaced or the disk is full, readers that wait for a
// writer, and two recipes on one target refused.
#include <catch2/catch.hpp>

#include <sys/mount.h>

#include <filesystem>

#include "e2e_support.hpp"
#include <nlohmann/json.hpp>

#include "sitepatch/host/host.hpp"

namespace fs = std::filesystem;

TEST_CASE("lock files a killed libgit2 left are removed by the next writer, with a note", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  // What a SIGKILL during a ref update or the history's creation leaves.
  testsupport::spit(env.venv.root + "/.sitepatch/refs/heads/main.lock", "");
  testsupport::spit(env.venv.root + "/.sitepatch/config.lock", "");
  auto r = env.sp({"rollback", "--all"});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("removed 2 lock file(s) an interrupted sitepatch left in " + env.venv.root +
                   "/.sitepatch: config.lock, refs/heads/main.lock") != std::string::npos);
  CHECK(env.pristine());
  CHECK(env.sp({"list"}).out == "no patches applied in " + env.venv.root + "\n");
}

TEST_CASE("temps a killed write left beside the package's files are removed, with a note", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  // A writer killed on the way leaves its tag in the lock, and its temps carry it.
  testsupport::spit(env.venv.root + "/.sitepatch/sitepatch.lock", "27118 k3j4h5g6\n");
  std::string temp = env.site("flashinfer/jit/.cpp_ext.py.sitepatch-k3j4h5g6q1w2e3r4t5y6.tmp");
  std::string backup = env.site("flashinfer/.fp4_quantization.py.sitepatch-k3j4h5g6f7d8s9a0z1x2.orig");
  // One that only looks like a temp (a user's, or another tool's) is not sitepatch's to remove.
  std::string lookalike = env.site("flashinfer/jit/.cpp_ext.py.sitepatch-27118.tmp");
  for (auto& p : {temp, backup, lookalike}) testsupport::spit(p, "a whole copy\n");
  auto r = env.sp({"rollback", "--all"});
  INFO(r.err);
  CHECK(r.status == 0);
  // Counted, with the folders: a recipe of hundreds of files leaves hundreds of names.
  CHECK(r.err.find("removed 2 temporary file(s) an interrupted sitepatch left in 2 folders\n") != std::string::npos);
  CHECK(r.err.find(temp) == std::string::npos);
  // -v names each.
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  testsupport::spit(env.venv.root + "/.sitepatch/sitepatch.lock", "27118 k3j4h5g6\n");
  testsupport::spit(temp, "a whole copy\n");
  auto v = env.sp({"-v", "rollback", "--all"});
  CHECK(v.status == 0);
  CHECK(v.err.find("removed " + temp) != std::string::npos);
  CHECK(!fs::exists(temp));
  CHECK(!fs::exists(temp));
  CHECK(!fs::exists(backup));
  CHECK(fs::exists(lookalike));
  fs::remove(lookalike);
  CHECK(env.pristine());
}

TEST_CASE("a file that cannot be replaced: apply puts back what it wrote and exits 1", "[e2e]") {
  e2e::DemoEnv env;
  std::string frozen = env.site("flashinfer/fp4_quantization.py");
  REQUIRE(sitepatch::util::run({"chattr", "+i", frozen}).status == 0);
  auto r = env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")});
  sitepatch::util::run({"chattr", "-i", frozen});
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: error: " + frozen +
                   ": cannot replace: Operation not permitted; nothing was written (the 1 file(s) replaced "
                   "before it were put back)") != std::string::npos);
  CHECK(env.pristine());
  // The history says nothing is applied, and every command works afterwards.
  CHECK(env.sp({"list"}).out == "no patches applied in " + env.venv.root + "\n");
  CHECK(env.sp({"rollback", "--all"}).status == 0);
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("a full disk: apply exits 1 with every file as it was, the history says why", "[e2e]") {
  e2e::DemoEnv env;
  // A tiny filesystem for the history: full before the originals can be saved.
  std::string small = env.tmp.path + "/small";
  fs::create_directory(small);
  REQUIRE(::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=64k") == 0);
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{small};
  testsupport::spit(small + "/filler", std::string(60 * 1024, 'x'));
  auto r = env.sp({"--state-dir", small + "/state", "apply", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK(r.err.find("unknown libgit2 error") == std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("verify waits for a writer instead of reporting its half-done work", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  auto host = sitepatch::host::make_local_host();
  std::string lock = env.venv.root + "/.sitepatch/sitepatch.lock";
  {
    auto writer = host->lock(lock, 1000);
    auto r = env.sp({"--lock-timeout", "0.2", "verify"});
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: another sitepatch is working on this environment (lock " + lock +
                       " held); try again later\n");
  }
  CHECK(env.sp({"verify"}).status == 0);
}

TEST_CASE("a second recipe on a target another recipe patched is refused, naming it", "[e2e]") {
  e2e::DemoEnv env;
  std::string ra = env.recipe("ra.yaml",
                              "id: ra\n"
                              "edits:\n"
                              "  - module: flashinfer.jit.cpp_ext\n"
                              "    function: get_cuda_version\n"
                              "    replace-body: return Version('12.8')\n");
  std::string re = env.recipe("re.yaml",
                              "id: re\n"
                              "edits:\n"
                              "  - module: flashinfer.jit.cpp_ext\n"
                              "    function: get_cuda_version\n"
                              "    replace-body: return Version('12.9')\n");
  REQUIRE(env.sp({"apply", ra}).status == 0);
  auto r = env.sp({"apply", re});
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("flashinfer/jit/cpp_ext.py: get_cuda_version is already patched by recipe `ra` "
                   "(flashinfer.jit.cpp_ext:get_cuda_version); two recipes on one target cannot both be "
                   "undone: roll `ra` back first (sitepatch --venv " + env.venv.root +
                   " rollback ra), or merge the two recipes into one") != std::string::npos);
  // ra again is already applied; re is not recorded; both come back to pip's bytes.
  CHECK(env.sp({"apply", ra}).status == 0);
  CHECK(env.sp({"verify"}).status == 0);
  CHECK(env.sp({"verify", "re"}).status == 1);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("a copied venv's history describes the copy, a moved one follows it", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string patched = env.read("flashinfer/jit/cpp_ext.py");
  std::string copy = env.tmp.path + "/copy";
  REQUIRE(sitepatch::util::run({"cp", "-a", env.venv.root, copy}).status == 0);
  std::string copy_site = copy + env.venv.site_packages.substr(env.venv.root.size());

  // Rolling back the copy restores the copy, and leaves the original patched.
  auto r = testsupport::run_sitepatch({"--venv", copy, "rollback", "--all"});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("sitepatch: the history in " + copy + "/.sitepatch was recorded for " + env.venv.root +
                   "; the environment was copied or moved: it now describes " + copy) != std::string::npos);
  CHECK(e2e::read_tree(copy_site + "/flashinfer") == env.installed);
  CHECK(env.read("flashinfer/jit/cpp_ext.py") == patched);
  CHECK(env.sp({"verify"}).status == 0);

  // A reapply in a second copy reads the history several times, and says it once.
  std::string again = env.tmp.path + "/again";
  REQUIRE(sitepatch::util::run({"cp", "-a", env.venv.root, again}).status == 0);
  std::string again_site = again + env.venv.site_packages.substr(env.venv.root.size());
  testsupport::spit(again_site + "/flashinfer/jit/cpp_ext.py", env.installed.at("jit/cpp_ext.py"));
  auto re = testsupport::run_sitepatch({"--venv", again, "reapply", "--all"});
  INFO(re.err);
  CHECK(re.status == 0);
  size_t said = 0;
  for (size_t at = 0; (at = re.err.find("was recorded for", at)) != std::string::npos; ++at) ++said;
  CHECK(said == 1);

  // A moved venv: its history follows it.
  std::string moved = env.tmp.path + "/moved";
  fs::rename(env.venv.root, moved);
  auto v = testsupport::run_sitepatch({"--venv", moved, "verify"});
  CHECK(v.status == 0);
  auto back = testsupport::run_sitepatch({"--venv", moved, "rollback", "--all"});
  CHECK(back.status == 0);
  std::string moved_site = moved + env.venv.site_packages.substr(env.venv.root.size());
  CHECK(e2e::read_tree(moved_site + "/flashinfer") == env.installed);
}

TEST_CASE("a --state-dir is bound to one environment", "[e2e]") {
  e2e::DemoEnv a;
  e2e::DemoEnv b;
  std::string state = a.tmp.path + "/shared-state";
  REQUIRE(a.sp({"--state-dir", state, "apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  auto r = b.sp({"--state-dir", state, "rollback", "--all"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: the history in " + state + " belongs to the environment at " + a.venv.root +
                     ", not to " + b.venv.root + ": give each environment its own --state-dir\n");
  CHECK(b.pristine());
  CHECK(!a.pristine());
  REQUIRE(a.sp({"--state-dir", state, "rollback", "--all"}).status == 0);
  CHECK(a.pristine());
}

TEST_CASE("a deleted history: verify and rollback say the files were patched, and how to get pip's back", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string marker = env.site(".sitepatch-patched.json");
  REQUIRE(fs::exists(marker));
  fs::remove_all(env.venv.root + "/.sitepatch");
  std::string lost = marker + " says sitepatch patched files here (flashinfer-dynamo), but there is no history at " +
                     env.venv.root + "/.sitepatch to tell what changed or undo it (was it deleted, or is "
                     "--state-dir missing?); pip's files come back with: pip install --force-reinstall --no-deps "
                     "flashinfer-python==0.5.3; then remove " + marker;
  auto v = env.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.err == "sitepatch: error: " + lost + "\n");
  auto r = env.sp({"rollback", "--all"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: cannot roll back: " + lost + "\n");
  CHECK(!env.pristine());
}

TEST_CASE("the note beside patched files follows what is applied", "[e2e]") {
  e2e::DemoEnv env;
  std::string marker = env.site(".sitepatch-patched.json");
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  auto doc = nlohmann::json::parse(testsupport::slurp(marker));
  CHECK(doc["history"] == env.venv.root + "/.sitepatch");
  CHECK(doc["reinstall"] == nlohmann::json::array({"flashinfer-python==0.5.3"}));
  CHECK(doc["patches"]["flashinfer-dynamo"].size() == 2);
  REQUIRE(env.sp({"rollback", "flashinfer-dynamo"}).status == 0);
  CHECK(!fs::exists(marker));
  CHECK(env.pristine());
}

TEST_CASE("verify checks each edit, not only each file: an edit replaced by hand is reported", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string file = env.site("flashinfer/fp4_quantization.py");
  std::string text = testsupport::slurp(file);
  // Someone takes the decorator away and adds a line elsewhere: the file merges cleanly.
  size_t at = text.find("@torch.compiler.disable\n");
  REQUIRE(at != std::string::npos);
  text.erase(at, std::string("@torch.compiler.disable\n").size());
  testsupport::spit(file, text + "\nX = 1\n");
  auto v = env.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out.find("flashinfer/fp4_quantization.py  replaced  (flashinfer/fp4_quantization.py: the edit of "
                   "flashinfer.fp4_quantization:fp4_quantize by flashinfer-dynamo is no longer in it (another "
                   "recipe or someone else replaced it); apply flashinfer-dynamo again to put it back)") !=
        std::string::npos);
  CHECK(v.out.find("flashinfer/jit/cpp_ext.py  applied") != std::string::npos);
}

TEST_CASE("a package folder on a read-only file system: the error names the file and says nothing was written",
          "[e2e][root]") {
  e2e::DemoEnv env;
  std::string jit = env.site("flashinfer/jit");
  // A read-only bind mount of one folder (as root): the history, elsewhere, stays writable.
  REQUIRE(sitepatch::util::run({"mount", "--bind", jit, jit}).status == 0);
  struct Unmount {
    std::string dir;
    ~Unmount() { sitepatch::util::run({"umount", dir}); }
  } unmount{jit};
  REQUIRE(sitepatch::util::run({"mount", "-o", "remount,bind,ro", jit}).status == 0);
  auto r = env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: error: cannot write " + jit + "/cpp_ext.py: no new file can be made in " + jit +
                   " (Read-only file system); nothing was written") != std::string::npos);
  CHECK(r.err.find(".tmp") == std::string::npos);  // no internal temp's name
  CHECK(env.pristine());
  CHECK(env.sp({"list"}).out == "no patches applied in " + env.venv.root + "\n");
}

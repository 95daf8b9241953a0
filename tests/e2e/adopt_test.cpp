// adopt: someone edited a patched file around sitepatch's edits; adopting records the
// files as they now are, so status and verify are green again, and rollback still
// gives pip's exact bytes back.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "record_check.hpp"
#include "sitepatch/store/history.hpp"

using testsupport::slurp;

namespace {

using e2e::kCheckRecord;

size_t entries(const e2e::DemoEnv& env) {
  return nlohmann::json::parse(env.sp({"--json", "log"}).out)["entries"].size();
}

}  // namespace

TEST_CASE("adopt: a hand-edited patched file becomes the applied state, rollback still gives pip's bytes",
          "[e2e][adopt]") {
  e2e::DemoEnv env;
  const std::string sp = "sitepatch --venv " + env.venv.root;
  const std::string record = env.site("flashinfer_python-0.5.3.dist-info/RECORD");
  const std::string pips = slurp(record);
  std::string clean = env.venv.run_python(kCheckRecord).out;
  REQUIRE(clean.rfind(" checked ", 0) == 0);
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  const std::string rel = "flashinfer/jit/cpp_ext.py";
  const std::string ours = env.read(rel);
  const std::string theirs = ours + "# local hotfix: keep\n";
  testsupport::spit(env.site(rel), theirs);

  // Until adopted, status says "changed by others" and names the remedy, and the look first.
  auto st = env.sp({"status"});
  CHECK(st.status == 3);
  CHECK(st.out.find("  flashinfer-dynamo  changed by others\n") != std::string::npos);
  CHECK(st.out.find("\nto fix:\n  " + sp + " adopt flashinfer-dynamo    # see their change first: " + sp +
                    " adopt --dry-run flashinfer-dynamo\n") != std::string::npos);
  auto v = env.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out.find("  " + rel + "  modified  (" + rel + " was changed by someone else; the edit is still in it)\n") !=
        std::string::npos);
  CHECK(v.out.find("\nto keep flashinfer-dynamo's files as they are now: " + sp +
                   " adopt flashinfer-dynamo (its --dry-run shows their change first)\n") != std::string::npos);

  // --dry-run prints their change and writes nothing.
  const std::string patched_record = slurp(record);
  size_t before = entries(env);
  auto dry = env.sp({"adopt", "--dry-run", "flashinfer-dynamo"});
  INFO(dry.err);
  CHECK(dry.status == 0);
  CHECK(dry.out == sitepatch::store::unified_diff(ours, theirs, rel));
  CHECK(dry.out.find("+# local hotfix: keep\n") != std::string::npos);
  CHECK(dry.err == "dry run: adopting flashinfer-dynamo would record 1 file(s) as they are now; nothing was written\n");
  CHECK(entries(env) == before);
  CHECK(slurp(record) == patched_record);
  CHECK(env.sp({"status"}).status == 3);

  auto ad = env.sp({"adopt", "flashinfer-dynamo"});
  INFO(ad.err);
  REQUIRE(ad.status == 0);
  CHECK(ad.out == dry.out);
  CHECK(ad.err == "adopted flashinfer-dynamo: 1 file(s) recorded as they are now; rollback still restores pip's "
                  "originals\n");
  CHECK(env.read(rel) == theirs);  // the file itself is not touched
  CHECK(env.sp({"status"}).status == 0);
  CHECK(env.sp({"verify"}).status == 0);
  CHECK(env.venv.run_python(kCheckRecord).out == clean);  // pip's row now has their bytes' hash
  auto log = nlohmann::json::parse(env.sp({"--json", "log", "-p", "-n", "1"}).out);
  CHECK(log["entries"][0]["summary"] == "adopt flashinfer-dynamo: its files as they are now");
  CHECK(log["entries"][0]["diff"] == dry.out);

  // Adopting again has nothing to do.
  auto again = env.sp({"adopt", "flashinfer-dynamo"});
  CHECK(again.status == 0);
  CHECK(again.err == "nothing to adopt: flashinfer-dynamo's files are as sitepatch left them\n");

  // JSON names the files and the commit. (A second change away from the first: one
  // touching the adopted lines would read as a rewrite of the edit.)
  testsupport::spit(env.site(rel), "# and another\n" + theirs);
  auto j = env.sp({"--json", "adopt", "flashinfer-dynamo"});
  REQUIRE(j.status == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["written"] == true);
  CHECK(doc["files"][0]["path"] == rel);
  CHECK(doc["commit"].get<std::string>().size() == 40);

  REQUIRE(env.sp({"rollback", "flashinfer-dynamo"}).status == 0);
  CHECK(env.pristine());
  CHECK(slurp(record) == pips);
  CHECK(env.venv.run_python(kCheckRecord).out == clean);
}

TEST_CASE("adopt refuses a patch to reapply, a missing file, an unknown id, and writes nothing", "[e2e][adopt]") {
  e2e::DemoEnv env;
  const std::string sp = "sitepatch --venv " + env.venv.root;
  auto none = env.sp({"adopt", "flashinfer-dynamo"});
  CHECK(none.status == 1);
  CHECK(none.err == "sitepatch: error: nothing was ever applied to " + env.venv.root + " (no history at " +
                        env.venv.root + "/.sitepatch)\n");

  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  size_t before = entries(env);
  auto unknown = env.sp({"adopt", "nope"});
  CHECK(unknown.status == 1);
  CHECK(unknown.err == "sitepatch: error: no applied patch `nope` (applied: flashinfer-dynamo)\n");

  // A file that is gone has no state to adopt.
  const std::string fp4 = "flashinfer/fp4_quantization.py";
  std::string fp4_ours = env.read(fp4);
  std::filesystem::remove(env.site(fp4));
  auto gone = env.sp({"adopt", "flashinfer-dynamo"});
  CHECK(gone.status == 1);
  CHECK(gone.err == "sitepatch: error: cannot adopt flashinfer-dynamo: " + fp4 +
                        " no longer exists: there is nothing to adopt; nothing was written\n");
  testsupport::spit(env.site(fp4), fp4_ours);

  // Someone put pip's file back: the edit is gone, and only apply brings it back.
  const std::string rel = "flashinfer/jit/cpp_ext.py";
  std::string ours = env.read(rel);
  testsupport::spit(env.site(rel), env.installed.at("jit/cpp_ext.py"));
  auto reverted = env.sp({"adopt", "flashinfer-dynamo"});
  CHECK(reverted.status == 1);
  CHECK(reverted.err == "sitepatch: error: cannot adopt flashinfer-dynamo: " + rel +
                            " is back to its original. It needs reapplying, not adopting: run " + sp +
                            " reapply flashinfer-dynamo; nothing was written\n");
  testsupport::spit(env.site(rel), ours);

  // After pip install -U, the new version's files need the recipe again.
  env.venv.upgrade(e2e::data_wheel("flashinfer-python", "0.6.0", env.tmp.path + "/wheels"));
  auto upgraded = env.sp({"adopt", "flashinfer-dynamo"});
  CHECK(upgraded.status == 1);
  CHECK(upgraded.err.rfind("sitepatch: error: cannot adopt flashinfer-dynamo: flashinfer-python 0.5.3 -> 0.6.0 "
                           "replaced " + rel, 0) == 0);
  CHECK(upgraded.err.find(". It needs reapplying, not adopting: run " + sp +
                          " reapply flashinfer-dynamo; nothing was written\n") != std::string::npos);
  CHECK(entries(env) == before);
}

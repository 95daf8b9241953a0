// The upgrade lifecycle with real pip: a patched package goes 1.0 -> 2.0 (unrelated
// lines change), 2.0 -> 3.0 (the patched function changes), 3.0 -> 4.0 (the function
// moves to a submodule, the old module re-exports it), a downgrade, an uninstall.
// After every rollback each file is byte-identical to what pip installed.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "sitepatch/util/hash.hpp"

namespace {

using testsupport::WheelSpec;

const char* kCuda1 =
    "\"\"\"CUDA helpers.\"\"\"\n"
    "import subprocess\n"
    "\n"
    "\n"
    "def get_cuda_path():\n"
    "    return \"/usr/local/cuda\"\n"
    "\n"
    "\n"
    "def get_cuda_version():\n"
    "    out = subprocess.check_output([get_cuda_path() + \"/bin/nvcc\", \"--version\"])\n"
    "    return out.decode().split()[-1]\n";

// 2.0: the docstring and get_cuda_path change; get_cuda_version does not.
const char* kCuda2 =
    "\"\"\"CUDA helpers (2.0).\"\"\"\n"
    "import os\n"
    "import subprocess\n"
    "\n"
    "\n"
    "def get_cuda_path():\n"
    "    return os.environ.get(\"CUDA_HOME\", \"/usr/local/cuda\")\n"
    "\n"
    "\n"
    "def get_cuda_version():\n"
    "    out = subprocess.check_output([get_cuda_path() + \"/bin/nvcc\", \"--version\"])\n"
    "    return out.decode().split()[-1]\n";

// 3.0: get_cuda_version itself changes.
const char* kCuda3 =
    "\"\"\"CUDA helpers (3.0).\"\"\"\n"
    "import os\n"
    "import subprocess\n"
    "\n"
    "\n"
    "def get_cuda_path():\n"
    "    return os.environ.get(\"CUDA_HOME\", \"/usr/local/cuda\")\n"
    "\n"
    "\n"
    "def get_cuda_version():\n"
    "    nvcc = os.path.join(get_cuda_path(), \"bin\", \"nvcc\")\n"
    "    out = subprocess.run([nvcc, \"--version\"], capture_output=True, check=True).stdout\n"
    "    return out.decode().split()[-1]\n";

const char* kOps =
    "from .cuda import get_cuda_version\n"
    "\n"
    "\n"
    "def fp4_quantize(x):\n"
    "    if get_cuda_version() < \"12.8\":\n"
    "        raise RuntimeError(\"fp4 needs CUDA 12.8\")\n"
    "    return x\n";

// 4.0: fp4_quantize lives in fastkern.quantization.fp4; fastkern.ops re-exports it
// through fastkern.quantization's star import.
const char* kOps4 =
    "# fp4_quantize moved to fastkern.quantization.fp4 in 4.0\n"
    "from .quantization import fp4_quantize\n";
const char* kQuantInit4 = "from .fp4 import *\n";
const char* kFp4 =
    "from ..cuda import get_cuda_version\n"
    "\n"
    "__all__ = [\"fp4_quantize\"]\n"
    "\n"
    "\n"
    "def fp4_quantize(x):\n"
    "    if get_cuda_version() < \"12.8\":\n"
    "        raise RuntimeError(\"fp4 needs CUDA 12.8\")\n"
    "    return x\n";

// 5.0: upstream took both fixes.
const char* kCuda5 =
    "\"\"\"CUDA helpers (5.0).\"\"\"\n"
    "\n"
    "\n"
    "def get_cuda_version():\n"
    "    return \"12.8\"\n";
const char* kOps5 =
    "import torch\n"
    "\n"
    "\n"
    "@torch.compiler.disable\n"
    "def fp4_quantize(x):\n"
    "    return x\n";

WheelSpec fastkern(int version) {
  WheelSpec w{"fastkern", std::to_string(version) + ".0", {{"fastkern/__init__.py", "from .ops import fp4_quantize\n"}}};
  w.files["fastkern/cuda.py"] = version == 1 ? kCuda1 : version == 2 ? kCuda2 : version == 5 ? kCuda5 : kCuda3;
  if (version == 5) {
    w.files["fastkern/ops.py"] = kOps5;
    return w;
  }
  if (version < 4) {
    w.files["fastkern/ops.py"] = kOps;
  } else {
    w.files["fastkern/ops.py"] = kOps4;
    w.files["fastkern/quantization/__init__.py"] = kQuantInit4;
    w.files["fastkern/quantization/fp4.py"] = kFp4;
  }
  return w;
}

std::string recipe_text(const std::string& extra = "") {
  return "id: fastkern-dynamo\n"
         "description: let dynamo trace fastkern's fp4 path\n" +
         extra +
         "edits:\n"
         "  - module: fastkern.cuda\n"
         "    function: get_cuda_version\n"
         "    replace-body: |\n"
         "      return \"12.8\"\n"
         "  - module: fastkern.ops\n"
         "    function: fp4_quantize\n"
         "    add-decorator: torch.compiler.disable\n"
         "    ensure-import: import torch\n";  // fastkern.ops does not import it
}

// A venv with fastkern installed by pip from wheels built here.
struct Kern {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string recipe;
  int version = 0;

  explicit Kern(int v, const std::string& extra = "")
      : venv(testsupport::Venv::create(tmp.path + "/venv")), recipe(tmp.path + "/fastkern.yaml") {
    testsupport::spit(recipe, recipe_text(extra));
    // The recipe imports torch into fastkern.ops: the environment must have one to import.
    venv.install(e2e::data_wheel("torch", "2.9.0", tmp.path + "/wheels"));
    venv.install(wheel(v));
    version = v;
  }
  std::string wheel(int v) const { return testsupport::build_wheel(fastkern(v), tmp.path + "/wheels"); }
  void upgrade(int v) {
    venv.upgrade(wheel(v));
    version = v;
  }
  void downgrade(int v) {
    venv.install(std::vector<std::string>{"--force-reinstall", wheel(v)});
    version = v;
  }
  std::string read(const std::string& rel) const { return testsupport::slurp(venv.site_packages + "/" + rel); }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  // Every source of fastkern is exactly what pip installed for the current version.
  bool pristine() const {
    std::map<std::string, std::string> want;
    for (auto& [rel, text] : fastkern(version).files) want[rel.substr(std::string("fastkern/").size())] = text;
    auto now = e2e::read_tree(venv.site_packages + "/fastkern");
    return now == want;
  }
  std::string verify_out() const { return sp({"verify"}).out; }
};

}  // namespace

TEST_CASE("upgrade 1.0 -> 2.0 (unrelated lines changed): replaced, reapplied, rolled back to 2.0", "[e2e][upgrade]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.upgrade(2);

  auto v = k.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out ==
        "fastkern-dynamo  replaced\n"
        "  fastkern/cuda.py  replaced  (fastkern 1.0 -> 2.0 replaced fastkern/cuda.py)\n"
        "  fastkern/ops.py  replaced  (fastkern 1.0 -> 2.0 replaced fastkern/ops.py)\n");
  auto list = k.sp({"list"});
  CHECK(list.status == 0);
  CHECK(list.out.find("fastkern-dynamo  fastkern==1.0") != std::string::npos);
  CHECK(list.out.find("  fastkern/cuda.py  replaced  (fastkern 1.0 -> 2.0 replaced fastkern/cuda.py)\n") !=
        std::string::npos);

  auto a = k.sp({"apply", k.recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.err.find("upgrade  fastkern-dynamo: fastkern 1.0 -> 2.0 replaced fastkern/cuda.py, fastkern 1.0 -> 2.0 "
                   "replaced fastkern/ops.py; reapplying\n") != std::string::npos);
  // get_cuda_version did not change upstream: nothing to review.
  CHECK(a.err.find("changed in") == std::string::npos);
  CHECK(k.read("fastkern/cuda.py").find("return \"12.8\"") != std::string::npos);
  CHECK(k.read("fastkern/cuda.py").find("CUDA_HOME") != std::string::npos);  // 2.0's own lines kept
  CHECK(k.verify_out() ==
        "fastkern-dynamo  applied\n"
        "  fastkern/cuda.py  applied\n"
        "  fastkern/ops.py  applied\n");
  CHECK(k.sp({"list"}).out.find("fastkern==2.0") != std::string::npos);

  auto rb = k.sp({"rollback", "fastkern-dynamo"});
  INFO(rb.err);
  REQUIRE(rb.status == 0);
  CHECK(k.pristine());
  CHECK(k.verify_out() == "no patches applied in " + k.venv.root + "\n");
}

TEST_CASE("rollback right after an upgrade writes nothing and drops the record", "[e2e][upgrade]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.upgrade(2);
  auto dry = k.sp({"rollback", "--all", "--dry-run"});
  CHECK(dry.status == 0);
  CHECK(dry.out.empty());
  auto rb = k.sp({"rollback", "fastkern-dynamo"});
  INFO(rb.err);
  REQUIRE(rb.status == 0);
  CHECK(rb.err.find("fastkern 1.0 -> 2.0 replaced fastkern/cuda.py; nothing needed undoing for fastkern-dynamo") !=
        std::string::npos);
  CHECK(k.pristine());
  CHECK(k.sp({"list"}).out == "no patches applied in " + k.venv.root + "\n");
}

TEST_CASE("upgrade 2.0 -> 3.0 (the patched function changed): apply says so and shows the diff", "[e2e][upgrade]") {
  Kern k(2);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.upgrade(3);
  auto plan = k.sp({"plan", k.recipe});
  CHECK(plan.status == 0);
  CHECK(plan.err.find("    get_cuda_version changed in 3.0: review the diff\n"
                      "      --- fastkern/cuda.py: get_cuda_version in fastkern 2.0\n"
                      "      +++ fastkern/cuda.py: get_cuda_version in fastkern 3.0\n") != std::string::npos);
  CHECK(plan.err.find("      -    out = subprocess.check_output([get_cuda_path() + \"/bin/nvcc\", \"--version\"])\n"
                      "      +    nvcc = os.path.join(get_cuda_path(), \"bin\", \"nvcc\")\n") != std::string::npos);
  // fp4_quantize did not change: no note for it.
  CHECK(plan.err.find("fp4_quantize changed") == std::string::npos);

  auto a = k.sp({"apply", k.recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.err.find("get_cuda_version changed in 3.0: review the diff") != std::string::npos);
  CHECK(k.verify_out().find("fastkern-dynamo  applied\n") == 0);
  // The record now holds 3.0's originals: applying again is a no-op, with no note.
  auto again = k.sp({"apply", k.recipe});
  CHECK(again.status == 0);
  CHECK(again.err.find("changed in") == std::string::npos);
  CHECK(again.err.find("nothing to do: fastkern-dynamo already applied") != std::string::npos);

  REQUIRE(k.sp({"rollback", "--all"}).status == 0);
  CHECK(k.pristine());
}

TEST_CASE("upgrade 3.0 -> 4.0 (the function moved): the re-export is followed to its new module",
          "[e2e][upgrade]") {
  Kern k(3);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.upgrade(4);
  CHECK(k.verify_out() ==
        "fastkern-dynamo  replaced\n"
        "  fastkern/cuda.py  replaced  (fastkern 3.0 -> 4.0 replaced fastkern/cuda.py)\n"
        "  fastkern/ops.py  replaced  (fastkern 3.0 -> 4.0 replaced fastkern/ops.py)\n");
  auto a = k.sp({"apply", k.recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.err.find("will apply  fastkern-dynamo  fastkern.ops:fp4_quantize  add-decorator  "
                   "(fastkern/quantization/fp4.py:6)\n"
                   "    fp4_quantize is re-exported: fastkern.ops -> fastkern.quantization -> "
                   "fastkern.quantization.fp4; patching it there\n") != std::string::npos);
  CHECK(k.read("fastkern/ops.py") == kOps4);
  CHECK(k.read("fastkern/quantization/fp4.py").find("@torch.compiler.disable\ndef fp4_quantize(x):") !=
        std::string::npos);
  // The record follows the move: ops.py (4.0's, untouched) is no longer one of its files.
  CHECK(k.verify_out() ==
        "fastkern-dynamo  applied\n"
        "  fastkern/cuda.py  applied\n"
        "  fastkern/quantization/fp4.py  applied\n");
  auto show = k.sp({"show", "fastkern-dynamo"});
  CHECK(show.out.find("+++ b/fastkern/quantization/fp4.py") != std::string::npos);
  CHECK(show.out.find("fastkern/ops.py") == std::string::npos);

  REQUIRE(k.sp({"rollback", "fastkern-dynamo"}).status == 0);
  CHECK(k.pristine());
}

TEST_CASE("a downgrade 4.0 -> 2.0 is a replacement too, and a moved-back function is found", "[e2e][upgrade]") {
  Kern k(4);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.downgrade(2);
  auto v = k.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out ==
        "fastkern-dynamo  missing\n"
        "  fastkern/cuda.py  replaced  (fastkern 4.0 -> 2.0 replaced fastkern/cuda.py)\n"
        "  fastkern/quantization/fp4.py  missing  (fastkern 4.0 -> 2.0 removed fastkern/quantization/fp4.py)\n");
  auto a = k.sp({"apply", k.recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.err.find("re-exported") == std::string::npos);
  CHECK(k.verify_out() ==
        "fastkern-dynamo  applied\n"
        "  fastkern/cuda.py  applied\n"
        "  fastkern/ops.py  applied\n");
  REQUIRE(k.sp({"rollback", "--all"}).status == 0);
  CHECK(k.pristine());
}

TEST_CASE("an uninstall: verify says missing, status says to drop it, rollback forgets it", "[e2e][upgrade]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.venv.uninstall("fastkern");
  auto v = k.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out ==
        "fastkern-dynamo  missing\n"
        "  fastkern/cuda.py  missing  (fastkern 1.0 was uninstalled; fastkern/cuda.py is gone)\n"
        "  fastkern/ops.py  missing  (fastkern 1.0 was uninstalled; fastkern/ops.py is gone)\n");
  auto st = k.sp({"status"});
  CHECK(st.status == 3);
  CHECK(st.out.find("  fastkern-dynamo  distribution uninstalled\n") != std::string::npos);
  CHECK(st.out.find("  sitepatch --venv " + k.venv.root + " rollback fastkern-dynamo\n") != std::string::npos);
  auto a = k.sp({"apply", k.recipe});
  CHECK(a.status == 1);
  CHECK(a.err.find("module fastkern.cuda not found in") != std::string::npos);

  auto rb = k.sp({"rollback", "fastkern-dynamo"});
  INFO(rb.err);
  REQUIRE(rb.status == 0);
  CHECK(rb.err.find("fastkern/cuda.py no longer exists; nothing to undo for fastkern-dynamo") != std::string::npos);
  CHECK(k.sp({"list"}).out == "no patches applied in " + k.venv.root + "\n");
  CHECK(!std::filesystem::exists(k.venv.site_packages + "/fastkern"));
}

TEST_CASE("status after pip install -U names the patch and the command that reapplies it", "[e2e][upgrade]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  auto ok = k.sp({"status"});
  CHECK(ok.status == 0);
  CHECK(ok.out.find(": 1 patch(es), all applied\n  fastkern-dynamo  applied\n") != std::string::npos);

  k.upgrade(2);
  auto st = k.sp({"status"});
  CHECK(st.status == 3);
  std::string venv = k.venv.root;
  // reapply puts back the history's copy: the recipe file may be gone by now.
  CHECK(st.out.substr(st.out.find(':')) ==
        ": 1 patch(es), 1 need(s) attention\n"
        "  fastkern-dynamo  needs reapplying\n"
        "                   fastkern 1.0 -> 2.0 replaced fastkern/cuda.py\n"
        "                   fastkern 1.0 -> 2.0 replaced fastkern/ops.py\n"
        "\n"
        "to fix:\n"
        "  sitepatch --venv " + venv + " reapply fastkern-dynamo\n");
  CHECK(st.out.find(venv + " (Python ") == 0);

  // The file changed since it was applied: the user may want the file, not the copy.
  testsupport::spit(k.recipe, recipe_text("on-upgrade: warn\n"));
  CHECK(k.sp({"status"}).out.find("  sitepatch --venv " + venv + " reapply fastkern-dynamo    # " + k.recipe +
                                  " changed since it was applied: this puts the applied copy back; plan the file "
                                  "to take the change\n") != std::string::npos);
  std::filesystem::remove(k.recipe);

  auto saved = k.sp({"show", "--recipe", "fastkern-dynamo"});
  CHECK(saved.status == 0);
  CHECK(saved.out == recipe_text());

  auto j = k.sp({"--json", "status"});
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["ok"] == false);
  CHECK(doc["patches"][0]["advice"] == "needs reapplying");
  CHECK(doc["patches"][0]["files"][0]["upgrade"] == "fastkern 1.0 -> 2.0");
  CHECK(doc["patches"][0]["command"] == "sitepatch --venv " + venv + " reapply fastkern-dynamo");
}

TEST_CASE("reapply --all after a force-reinstall, the recipe file deleted: the history's copy goes back",
          "[e2e][upgrade][reapply]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  const auto patched = e2e::read_tree(k.venv.site_packages + "/fastkern");
  std::filesystem::remove(k.recipe);
  k.downgrade(1);  // pip install --force-reinstall of the same wheel
  REQUIRE(k.pristine());

  // A dry run says what would change and writes nothing.
  auto dry = k.sp({"reapply", "--all", "--dry-run"});
  INFO(dry.err);
  CHECK(dry.status == 0);
  CHECK(dry.err.find("dry run: 2 file(s) would change; nothing was written\n") != std::string::npos);
  CHECK(k.pristine());

  auto r = k.sp({"reapply", "--all"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("applied fastkern-dynamo: 2 file(s) changed") != std::string::npos);
  CHECK(e2e::read_tree(k.venv.site_packages + "/fastkern") == patched);
  CHECK(k.sp({"verify"}).status == 0);
  // The record still names the file it was first applied from, not the history's copy.
  auto listed = nlohmann::json::parse(k.sp({"--json", "list"}).out);
  CHECK(listed["patches"][0]["recipe"] == k.recipe);

  // Nothing left to reapply: said, exit 0, nothing written.
  auto again = k.sp({"reapply", "--all"});
  CHECK(again.status == 0);
  CHECK(again.err == "nothing to reapply: every patch is applied\n");
  // A named patch that is applied: apply's own answer.
  auto named = k.sp({"reapply", "fastkern-dynamo"});
  CHECK(named.status == 0);
  CHECK(named.err.find("nothing to do: fastkern-dynamo already applied\n") != std::string::npos);

  // After an upgrade the recorded recipe is reapplied to the new version, with apply's checks.
  k.upgrade(2);
  auto up = k.sp({"--json", "reapply", "fastkern-dynamo"});
  INFO(up.out);
  REQUIRE(up.status == 0);
  auto doc = nlohmann::json::parse(up.out);
  CHECK(doc["written"] == true);
  CHECK(doc["left_out"] == nlohmann::json::array());
  CHECK(doc["edits"].size() == 2);
  CHECK(k.read("fastkern/cuda.py").find("    return \"12.8\"\n") != std::string::npos);
  CHECK(k.sp({"verify"}).status == 0);
}

TEST_CASE("reapply refuses unknown ids, a gone distribution, and no ids at all", "[e2e][upgrade][reapply]") {
  Kern k(1);
  auto none = k.sp({"reapply"});
  CHECK(none.status == 2);
  CHECK(none.err == "sitepatch: error: name the patches to reapply, or give --all\n");
  auto both = k.sp({"reapply", "--all", "x"});
  CHECK(both.status == 2);
  CHECK(both.err == "sitepatch: error: give ids or --all, not both\n");
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  auto unknown = k.sp({"reapply", "nope"});
  CHECK(unknown.status == 1);
  CHECK(unknown.err.find("nope") != std::string::npos);
  CHECK(unknown.err.find("fastkern-dynamo") != std::string::npos);

  k.venv.uninstall("fastkern");
  auto gone = k.sp({"reapply", "fastkern-dynamo"});
  CHECK(gone.status == 1);
  CHECK(gone.err == ("sitepatch: error: cannot reapply fastkern-dynamo: fastkern 1.0 was uninstalled: nothing to reapply it to; "
                          "sitepatch --venv " + k.venv.root + " rollback fastkern-dynamo forgets the record\n"));
  auto all = k.sp({"reapply", "--all"});
  CHECK(all.status == 0);
  CHECK(all.err.find("left out fastkern-dynamo: fastkern 1.0 was uninstalled: nothing to reapply it to") != std::string::npos);
  CHECK(all.err.find("nothing reapplied\n") != std::string::npos);
}

TEST_CASE("a recipe whose requires no longer matches refuses, naming the versions, unless --force",
          "[e2e][upgrade]") {
  Kern k(3, "requires: fastkern>=1.0,<4\n");
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.upgrade(4);
  std::string cuda = k.read("fastkern/cuda.py");
  auto a = k.sp({"apply", k.recipe});
  CHECK(a.status == 1);
  CHECK(a.err.find("fails  fastkern-dynamo requires fastkern>=1.0,<4; installed: fastkern 4.0 (--force applies "
                   "anyway)\n") != std::string::npos);
  CHECK(a.err.find("sitepatch: apply failed; nothing was written") != std::string::npos);
  CHECK(k.read("fastkern/cuda.py") == cuda);
  auto forced = k.sp({"apply", "--force", k.recipe});
  INFO(forced.err);
  CHECK(forced.status == 0);
  CHECK(k.verify_out().find("fastkern-dynamo  applied\n") == 0);
  REQUIRE(k.sp({"rollback", "--all"}).status == 0);
  CHECK(k.pristine());
}

TEST_CASE("on-upgrade: warn skips the recipe with a warning, fail refuses, --force reapplies", "[e2e][upgrade]") {
  SECTION("warn") {
    Kern k(1, "on-upgrade: warn\n");
    REQUIRE(k.sp({"apply", k.recipe}).status == 0);
    k.upgrade(2);
    auto a = k.sp({"apply", k.recipe});
    INFO(a.err);
    CHECK(a.status == 0);
    CHECK(a.err.find("skipped  fastkern-dynamo  fastkern.cuda:get_cuda_version  replace-body\n") != std::string::npos);
    CHECK(a.err.find("nothing written: fastkern-dynamo skipped\n") != std::string::npos);
    CHECK(a.err.find("upgrade  fastkern-dynamo: fastkern 1.0 -> 2.0 replaced fastkern/cuda.py, fastkern 1.0 -> 2.0 "
                     "replaced fastkern/ops.py; not reapplied (on-upgrade: warn; --force reapplies)\n") !=
          std::string::npos);
    CHECK(k.pristine());
    CHECK(k.sp({"verify"}).status == 3);
    REQUIRE(k.sp({"apply", "--force", k.recipe}).status == 0);
    CHECK(k.sp({"verify"}).status == 0);
  }
  SECTION("fail") {
    Kern k(1, "on-upgrade: fail\n");
    REQUIRE(k.sp({"apply", k.recipe}).status == 0);
    k.upgrade(2);
    auto a = k.sp({"apply", k.recipe});
    CHECK(a.status == 1);
    CHECK(a.err.find("fails  fastkern-dynamo: fastkern 1.0 -> 2.0 replaced fastkern/cuda.py, fastkern 1.0 -> 2.0 "
                     "replaced fastkern/ops.py; the recipe says on-upgrade: fail (review the new version, then "
                     "apply --force)\n") != std::string::npos);
    CHECK(k.pristine());
    REQUIRE(k.sp({"apply", "--force", k.recipe}).status == 0);
    CHECK(k.sp({"verify"}).status == 0);
  }
}

TEST_CASE("a re-export chain that cycles, or leaves the distribution, is not followed", "[e2e][upgrade]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  WheelSpec helper{"helperlib", "1.0", {{"helperlib/__init__.py", "def helper():\n    return 1\n"}}};
  WheelSpec loop{"looppkg", "1.0",
                 {{"looppkg/__init__.py", ""},
                  {"looppkg/a.py", "from .b import f\n"},
                  {"looppkg/b.py", "from .a import f\n"},
                  {"looppkg/c.py", "from helperlib import helper\n"}}};
  venv.install({testsupport::build_wheel(helper, tmp.path + "/w"), testsupport::build_wheel(loop, tmp.path + "/w")});
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe,
                    "id: r\n"
                    "edits:\n"
                    "  - module: looppkg.a\n"
                    "    function: f\n"
                    "    add-decorator: functools.cache\n"
                    "  - module: looppkg.c\n"
                    "    function: helper\n"
                    "    add-decorator: functools.cache\n");
  auto r = testsupport::run_sitepatch({"--venv", venv.root, "plan", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find(recipe + ":3:3: fails  r  looppkg.a:f  add-decorator  (looppkg/a.py): function f is not "
                   "defined; re-export cycle: looppkg.a -> looppkg.b -> looppkg.a\n") != std::string::npos);
  CHECK(r.err.find(recipe + ":6:3: fails  r  looppkg.c:helper  add-decorator  (looppkg/c.py): function helper is "
                   "not defined; looppkg.c imports helper from helperlib, outside looppkg (not followed)\n") !=
        std::string::npos);
}

TEST_CASE("rollback of a file others changed undoes only our hunk, a clash writes nothing and shows it",
          "[e2e][upgrade]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  std::string cuda = k.venv.site_packages + "/fastkern/cuda.py";
  std::string patched = testsupport::slurp(cuda);

  SECTION("a change elsewhere in the file is kept") {
    std::string theirs = patched;
    theirs.replace(theirs.find("\"/usr/local/cuda\""), 17, "\"/opt/cuda\"");
    testsupport::spit(cuda, theirs);
    CHECK(k.sp({"verify"}).out.find("fastkern/cuda.py  modified") != std::string::npos);
    auto rb = k.sp({"rollback", "--all"});
    INFO(rb.err);
    REQUIRE(rb.status == 0);
    std::string want = kCuda1;
    want.replace(want.find("\"/usr/local/cuda\""), 17, "\"/opt/cuda\"");
    CHECK(testsupport::slurp(cuda) == want);
    CHECK(k.read("fastkern/ops.py") == kOps);
  }
  SECTION("a change to our own lines is a conflict: nothing is written") {
    std::string theirs = patched;
    theirs.replace(theirs.find("return \"12.8\""), 13, "return \"12.9\"");
    testsupport::spit(cuda, theirs);
    auto rb = k.sp({"rollback", "--all"});
    CHECK(rb.status == 1);
    CHECK(rb.err.find("sitepatch: error: fastkern-dynamo: cannot undo its edit of fastkern/cuda.py cleanly: the "
                      "file changed around it since fastkern-dynamo was applied (ours: now; theirs: without "
                      "fastkern-dynamo):\n") != std::string::npos);
    // The conflicting lines, indented, with a little context; not the whole file.
    CHECK(rb.err.find("    <<<<<<< ours\n") != std::string::npos);
    CHECK(rb.err.find("        return \"12.9\"\n") != std::string::npos);
    CHECK(rb.err.find("CUDA helpers") == std::string::npos);
    CHECK(rb.err.find("  to roll it back anyway, losing that change: sitepatch --venv ") != std::string::npos);
    CHECK(rb.err.find("nothing was written") != std::string::npos);
    CHECK(testsupport::slurp(cuda) == theirs);
    CHECK(k.read("fastkern/ops.py") != kOps);  // the other file was not undone either
    CHECK(k.sp({"list"}).out.find("fastkern-dynamo") != std::string::npos);
  }
}

TEST_CASE("the record keeps, per edit, the owner and version, file hashes and the target's fingerprint",
          "[e2e][upgrade]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  auto git = sitepatch::util::run({"git", "--git-dir", k.venv.root + "/.sitepatch", "show",
                                   "HEAD:patches/fastkern-dynamo/patch.json"});
  REQUIRE(git.status == 0);
  auto j = nlohmann::json::parse(git.out);
  CHECK(j["format"] == 3);
  CHECK(j["replace_indent"] == "relative");
  REQUIRE(j["edits"].size() == 2);
  auto e = j["edits"][0];
  CHECK(e["where"] == "fastkern.cuda:get_cuda_version");
  CHECK(e["file"] == "fastkern/cuda.py");
  CHECK(e["module"] == "fastkern.cuda");
  CHECK(e["dist"] == "fastkern");
  CHECK(e["version"] == "1.0");
  std::string original =
      "def get_cuda_version():\n"
      "    out = subprocess.check_output([get_cuda_path() + \"/bin/nvcc\", \"--version\"])\n"
      "    return out.decode().split()[-1]";
  CHECK(e["original"] == original);
  CHECK(e["fingerprint"] == sitepatch::util::sha256_hex(original));
  CHECK(e["before_sha256"] == sitepatch::util::sha256_hex(kCuda1));
  CHECK(e["after_sha256"] == sitepatch::util::sha256_hex(k.read("fastkern/cuda.py")));
  CHECK(j["edits"][1]["where"] == "fastkern.ops:fp4_quantize");
}

TEST_CASE("the bundled recipe after pip install -U flashinfer-python 0.5.3 -> 0.6.0", "[e2e][upgrade]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  env.venv.upgrade(e2e::data_wheel("flashinfer-python", "0.6.0", env.tmp.path + "/wheels"));
  auto fresh = e2e::read_tree(env.venv.site_packages + "/flashinfer");

  auto st = env.sp({"status"});
  CHECK(st.status == 3);
  CHECK(st.out.find("  flashinfer-dynamo  needs reapplying\n"
                    "                     flashinfer-python 0.5.3 -> 0.6.0 replaced flashinfer/jit/cpp_ext.py\n") !=
        std::string::npos);

  auto a = env.sp({"apply", recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.err.find("get_cuda_version changed in 0.6.0: review the diff") != std::string::npos);
  CHECK(a.err.find("fp4_quantize is re-exported: flashinfer.fp4_quantization -> flashinfer.quantization -> "
                   "flashinfer.quantization.fp4_quantization; patching it there") != std::string::npos);
  auto probe = env.venv.run_python(
      "import os; os.environ['CUDA_HOME'] = '/nonexistent'\n"
      "import flashinfer\n"
      "print(flashinfer.fp4_quantize._torchdynamo_disable, flashinfer.get_cuda_version())\n");
  INFO(probe.err);
  CHECK(probe.out == "True 12.8\n");
  CHECK(env.sp({"status"}).status == 0);

  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(e2e::read_tree(env.venv.site_packages + "/flashinfer") == fresh);
}

TEST_CASE("an upgrade that already has every edit: nothing is written and the old record goes", "[e2e][upgrade]") {
  Kern k(1);
  REQUIRE(k.sp({"apply", k.recipe}).status == 0);
  k.upgrade(5);
  auto a = k.sp({"apply", k.recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.err.find("upgrade  fastkern-dynamo: every edit is already in the installed version (upstream has the "
                   "fix); nothing to reapply, and its record of the old version is dropped\n") != std::string::npos);
  CHECK(a.err.find("nothing written: fastkern-dynamo already in the installed version\n") != std::string::npos);
  CHECK(a.err.find("reapplying") == std::string::npos);
  CHECK(k.pristine());
  CHECK(k.sp({"list"}).out == "no patches applied in " + k.venv.root + "\n");
  CHECK(k.sp({"status"}).status == 0);
  auto log = sitepatch::util::run({"git", "--git-dir", k.venv.root + "/.sitepatch", "log", "-1", "--format=%s"});
  CHECK(log.out == "forget fastkern-dynamo: the installed version has every edit\n");
}

TEST_CASE("two recipes on one file survive an upgrade together and roll back one at a time", "[e2e][upgrade]") {
  e2e::DemoEnv env;
  auto a = env.recipe("a.yaml",
                      "id: cuda-version\n"
                      "edits:\n"
                      "  - module: flashinfer.jit.cpp_ext\n"
                      "    function: get_cuda_version\n"
                      "    replace-body: |\n"
                      "      return Version(torch.version.cuda)\n");
  auto b = env.recipe("b.yaml",
                      "id: no-lock\n"
                      "edits:\n"
                      "  - module: flashinfer.jit.cpp_ext\n"
                      "    function: load_cuda_ops\n"
                      "    replace: {old: 'with open(lock_path, \"a\"):', new: 'if False:  # no lock file'}\n");
  REQUIRE(env.sp({"apply", a}).status == 0);
  REQUIRE(env.sp({"apply", b}).status == 0);
  env.venv.upgrade(e2e::data_wheel("flashinfer-python", "0.6.0", env.tmp.path + "/wheels"));
  std::string fresh = env.read("flashinfer/jit/cpp_ext.py");

  auto both = env.sp({"apply", a, b});
  INFO(both.err);
  REQUIRE(both.status == 0);
  CHECK(both.err.find("upgrade  cuda-version: flashinfer-python 0.5.3 -> 0.6.0 replaced flashinfer/jit/cpp_ext.py; "
                      "reapplying\n") != std::string::npos);
  CHECK(both.err.find("upgrade  no-lock: flashinfer-python 0.5.3 -> 0.6.0 replaced flashinfer/jit/cpp_ext.py; "
                      "reapplying\n") != std::string::npos);
  std::string patched = env.read("flashinfer/jit/cpp_ext.py");
  CHECK(patched.find("return Version(torch.version.cuda)") != std::string::npos);
  CHECK(patched.find("if False:  # no lock file") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);

  REQUIRE(env.sp({"rollback", "cuda-version"}).status == 0);
  std::string only_b = env.read("flashinfer/jit/cpp_ext.py");
  CHECK(only_b.find("subprocess.run([nvcc") != std::string::npos);  // 0.6.0's own body is back
  CHECK(only_b.find("if False:  # no lock file") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);
  REQUIRE(env.sp({"rollback", "no-lock"}).status == 0);
  CHECK(env.read("flashinfer/jit/cpp_ext.py") == fresh);
}

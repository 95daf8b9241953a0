// From hand edits to a recipe: a distribution pip installed is edited by hand (sed, vim),
// `capture` turns the edits into named edits recorded as applied; rollback gives pip's
// bytes back, the recipe applied to a fresh install gives the edited bytes.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace fs = std::filesystem;

namespace {

const char* kCuda =
    "\"\"\"CUDA helpers.\"\"\"\n"
    "import subprocess\n"
    "\n"
    "TIMEOUT = 30\n"
    "\n"
    "\n"
    "def get_cuda_version():\n"
    "    \"\"\"nvcc's version.\"\"\"\n"
    "    out = subprocess.check_output([\"nvcc\", \"--version\"], timeout=TIMEOUT)\n"
    "    return out.decode().split()[-1]\n";

const char* kOps =
    "from .cuda import get_cuda_version\n"
    "\n"
    "\n"
    "def fp4_quantize(x):\n"
    "    if get_cuda_version() < \"12.8\":\n"
    "        raise RuntimeError(\"fp4 needs CUDA 12.8\")\n"
    "    return x\n"
    "\n"
    "\n"
    "print(\"ops loaded\")\n";

// A table of the same line many times: a change in its middle has no text near it that
// is found once, so no edit can name it.
std::string table() {
  std::string t = "ROWS = []\n";
  for (int i = 0; i < 30; ++i) t += "ROWS.append(0)\n";
  return t + "\n\ndef rows():\n    return ROWS\n";
}

testsupport::WheelSpec handkern(const std::string& version = "1.0") {
  return {"handkern", version,
          {{"handkern/__init__.py", "from .ops import fp4_quantize\n"},
           {"handkern/cuda.py", kCuda},
           {"handkern/ops.py", kOps},
           {"handkern/table.py", table()},
           {"handkern/data.txt", "plain data\n"}}};
}

// table() with its 16th row changed.
std::string table_changed() {
  std::string t = table();
  size_t at = 0;
  for (int i = 0; i < 16; ++i) at = t.find('\n', at) + 1;
  return t.replace(at, std::string("ROWS.append(0)").size(), "ROWS.append(1)");
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

struct Hand {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string wheel;
  std::map<std::string, std::string> pip;  // what pip installed

  Hand() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    wheel = testsupport::build_wheel(handkern(), tmp.path + "/wheels");
    // The edits use torch: the environment has a stand-in to import.
    venv.install({e2e::data_wheel("torch", "2.9.0", tmp.path + "/wheels"), wheel});
    pip = tree();
  }
  std::map<std::string, std::string> tree() const { return e2e::read_tree(venv.site_packages + "/handkern"); }
  std::string path(const std::string& rel) const { return venv.site_packages + "/handkern/" + rel; }
  std::string read(const std::string& rel) const { return testsupport::slurp(path(rel)); }
  void write(const std::string& rel, const std::string& text) const { testsupport::spit(path(rel), text); }
  sitepatch::util::RunResult sp(std::vector<std::string> args, const std::map<std::string, std::string>& vars = {}) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args, vars);
  }
  // The edits of every shape a named edit makes: a body, a decorator, a constant, a new
  // helper, an import.
  void edit_by_hand() const {
    std::string cuda = replaced(kCuda,
                                "    out = subprocess.check_output([\"nvcc\", \"--version\"], timeout=TIMEOUT)\n"
                                "    return out.decode().split()[-1]\n",
                                "    return _cuda_from_torch()\n");
    cuda = replaced(cuda, "TIMEOUT = 30\n", "TIMEOUT = 300\n");
    cuda = replaced(cuda, "import subprocess\n", "import subprocess\nimport torch\n");
    cuda += "\n\ndef _cuda_from_torch():\n    return str(torch.version.cuda)\n";
    write("cuda.py", cuda);
    std::string ops = replaced(kOps, "def fp4_quantize(x):\n", "@torch.compiler.disable\ndef fp4_quantize(x):\n");
    write("ops.py", replaced(ops, "from .cuda import get_cuda_version\n", "from .cuda import get_cuda_version\nimport torch\n"));
  }
  // RECORD's row of `rel` as pip's format writes it for `text`.
  bool record_says(const std::string& rel, const std::string& text) const {
    std::string record = testsupport::slurp(venv.site_packages + "/handkern-1.0.dist-info/RECORD");
    return record.find("handkern/" + rel + ",sha256=" + sitepatch::util::sha256_record(text) + "," +
                       std::to_string(text.size())) != std::string::npos;
  }
};

}  // namespace

TEST_CASE("capture: hand edits of every shape, recorded, rollback gives pip's bytes, apply gives the edits again",
          "[e2e][capture]") {
  Hand h;
  auto saved = h.sp({"edit", "handkern"});
  INFO(saved.err);
  REQUIRE(saved.status == 0);
  CHECK(saved.err.find("saved pip's bytes of 4 Python file(s) of handkern 1.0 in the history") != std::string::npos);
  CHECK(saved.out == "  " + h.venv.site_packages + "/handkern\n");
  CHECK(h.tree() == h.pip);  // edit changes nothing

  h.edit_by_hand();
  auto edited = h.tree();
  std::string recipe = h.tmp.path + "/handkern-local.yaml";
  auto r = testsupport::run_sitepatch({"--venv", h.venv.root, "capture", "handkern", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("captured handkern 1.0: 2 file(s) edited, 6 named edit(s) -> " + recipe) != std::string::npos);
  CHECK(r.err.find("left out") == std::string::npos);
  CHECK(r.err.find("  handkern/cuda.py: 4 edit(s), pip's bytes from the history (sitepatch edit)\n") != std::string::npos);
  CHECK(r.err.find("recorded handkern-local as applied (the files stay as edited)") != std::string::npos);
  // The diff is pip's bytes -> the edited ones.
  CHECK(r.out.find("+@torch.compiler.disable\n def fp4_quantize(x):") != std::string::npos);

  // The recipe names each edit by the smallest action that makes it.
  std::string text = testsupport::slurp(recipe);
  INFO(text);
  CHECK(text.find("id: handkern-local\n") != std::string::npos);
  CHECK(text.find("requires: handkern>=1.0,<1.1\n") != std::string::npos);
  CHECK(text.find("  - module: handkern.cuda\n    variable: TIMEOUT\n    set-value: 300\n") != std::string::npos);
  CHECK(text.find("  - module: handkern.cuda\n    ensure-import: import torch\n") != std::string::npos);
  CHECK(text.find("    function: get_cuda_version\n    replace-body: |\n      return _cuda_from_torch()\n") !=
        std::string::npos);
  CHECK(text.find("    function: get_cuda_version\n    insert-after: |\n      def _cuda_from_torch():\n"
                  "          return str(torch.version.cuda)\n") != std::string::npos);
  CHECK(text.find("  - module: handkern.ops\n    ensure-import: import torch\n") != std::string::npos);
  CHECK(text.find("    function: fp4_quantize\n    add-decorator: torch.compiler.disable\n") != std::string::npos);
  CHECK(text.find("replace-function") == std::string::npos);

  // Recorded as applied: nothing on disk moved, RECORD follows the edited bytes.
  CHECK(h.tree() == edited);
  CHECK(h.record_says("cuda.py", edited.at("cuda.py")));
  CHECK(h.sp({"verify"}).status == 0);
  auto list = nlohmann::json::parse(h.sp({"--json", "list"}).out);
  REQUIRE(list["patches"].size() == 1);
  CHECK(list["patches"][0]["id"] == "handkern-local");
  CHECK(list["patches"][0]["recipe"] == recipe);

  // rollback: pip's bytes and pip's RECORD rows.
  auto rb = h.sp({"rollback", "handkern-local"});
  INFO(rb.err);
  REQUIRE(rb.status == 0);
  CHECK(h.tree() == h.pip);
  CHECK(h.record_says("cuda.py", h.pip.at("cuda.py")));

  // The recipe on a fresh install gives the hand-edited bytes back.
  h.venv.install(std::vector<std::string>{"--force-reinstall", "--no-deps", h.wheel});
  auto a = h.sp({"apply", recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(h.tree() == edited);
  // Nothing left to capture: every file is as the history says (RECORD kept true).
  auto again = h.sp({"capture", "handkern", "--id", "again", "-o", h.tmp.path + "/again.yaml"});
  CHECK(again.status == 0);
  INFO(again.err);
  CHECK(again.err.find("nothing to capture: every file of handkern 1.0 is pip's (5 checked, 2 hashed; --hash-all hashes every one)") != std::string::npos);
  CHECK_FALSE(fs::exists(h.tmp.path + "/again.yaml"));
}

TEST_CASE("capture: pip's bytes from a wheel, an unpacked tree, a uv cache, another version refused by RECORD's hash",
          "[e2e][capture]") {
  Hand h;
  h.write("ops.py", replaced(kOps, "    return x\n", "    return x * 2\n"));
  auto edited = h.tree();

  // No original anywhere: say where it looked and what to give.
  auto none = h.sp({"capture", "handkern", "-o", h.tmp.path + "/x.yaml"}, {{"HOME", h.tmp.path}, {"XDG_CACHE_HOME", ""}});
  CHECK(none.status == 1);
  CHECK(none.err == "sitepatch: error: pip's bytes of handkern/ops.py (handkern 1.0) are nowhere sitepatch can find "
                    "them (the history, uv's or pip's cache): give --original WHEEL|DIR of handkern==1.0 (pip download "
                    "--no-deps handkern==1.0 gets the wheel); next time, run `sitepatch edit handkern` before editing\n");
  CHECK_FALSE(fs::exists(h.tmp.path + "/x.yaml"));

  // Another version's wheel: refused, naming it; nothing recorded.
  std::string other = testsupport::build_wheel(handkern("1.1"), h.tmp.path + "/other");
  auto wrong = h.sp({"capture", "handkern", "--original", other, "-o", h.tmp.path + "/x.yaml"});
  CHECK(wrong.status == 1);
  CHECK(wrong.err == "sitepatch: error: --original " + other + " is handkern 1.1, not handkern 1.0 (the version installed)\n");
  // A tree of the right name whose file is not pip's: refused by RECORD's hash.
  std::string tree = h.tmp.path + "/unpacked";
  auto unzip = sitepatch::util::run({"python3", "-m", "zipfile", "-e", h.wheel, tree});
  REQUIRE(unzip.status == 0);
  testsupport::spit(tree + "/handkern/ops.py", kOps + std::string("# changed\n"));
  auto bad = h.sp({"capture", "handkern", "--original", tree, "-o", h.tmp.path + "/x.yaml"});
  CHECK(bad.status == 1);
  CHECK(bad.err.find("does not hold pip's bytes of handkern/ops.py") != std::string::npos);
  CHECK(h.sp({"list"}).out.find("handkern-local") == std::string::npos);

  // The wheel itself.
  auto from_wheel = h.sp({"capture", "handkern", "--original", h.wheel, "--dry-run"});
  INFO(from_wheel.err);
  REQUIRE(from_wheel.status == 0);
  CHECK(from_wheel.err.find("pip's bytes from wheel " + h.wheel) != std::string::npos);
  CHECK(from_wheel.err.find("dry run: nothing was recorded or written") != std::string::npos);
  // The unpacked tree (pip's bytes again).
  testsupport::spit(tree + "/handkern/ops.py", kOps);
  auto from_tree = h.sp({"capture", "handkern", "--original", tree, "--dry-run"});
  REQUIRE(from_tree.status == 0);
  CHECK(from_tree.err.find("pip's bytes from folder " + tree) != std::string::npos);

  // uv's cache layout: each wheel unpacked under archive-v0/<id>/, its .dist-info there.
  std::string uv = h.tmp.path + "/uv-cache";
  fs::create_directories(uv + "/archive-v0");
  fs::rename(tree, uv + "/archive-v0/q1w2e3");
  std::string recipe = h.tmp.path + "/from-uv.yaml";
  auto from_uv = h.sp({"capture", "handkern", "--id", "from-uv", "-o", recipe}, {{"UV_CACHE_DIR", uv}});
  INFO(from_uv.err);
  REQUIRE(from_uv.status == 0);
  CHECK(from_uv.err.find("pip's bytes from uv's cache " + uv + "/archive-v0/q1w2e3") != std::string::npos);
  // One line of a longer body: that line, old -> new.
  CHECK(testsupport::slurp(recipe).find("    function: fp4_quantize\n    replace:\n      old: return x\n"
                                        "      new: return x * 2\n") != std::string::npos);
  CHECK(h.tree() == edited);
  REQUIRE(h.sp({"rollback", "from-uv"}).status == 0);
  CHECK(h.tree() == h.pip);

  // pip's cache: a wheel it built (wheels/.../<name>-<version>-<tags>.whl), and one it
  // downloaded, kept as an HTTP body (http-v2/.../<key>.body, the zip itself).
  h.write("ops.py", replaced(kOps, "    return x\n", "    return x * 2\n"));
  for (std::string where : {"/wheels/ab/cd/ef0123/handkern-1.0-py3-none-any.whl", "/http-v2/a/b/c/d/e/0f1e2d3c.body"}) {
    std::string pip = h.tmp.path + "/pip-cache-" + std::to_string(where.size());
    fs::create_directories(fs::path(pip + where).parent_path());
    fs::copy_file(h.wheel, pip + where);
    auto from_pip = h.sp({"capture", "handkern", "--dry-run"}, {{"PIP_CACHE_DIR", pip}, {"HOME", h.tmp.path}});
    INFO(from_pip.err);
    CHECK(from_pip.status == 0);
    CHECK(from_pip.err.find("pip's bytes from pip's cache " + pip + where) != std::string::npos);
  }
}

TEST_CASE("capture: a module-level line is a replace with no target, trimmed, and apply makes it on pip's bytes",
          "[e2e][capture]") {
  Hand h;
  REQUIRE(h.sp({"edit", "handkern"}).status == 0);
  std::string ops = replaced(kOps, "print(\"ops loaded\")\n", "print(\"ops loaded, patched\")\n");
  ops = replaced(ops, "    return x\n", "    return x + 0\n");
  h.write("ops.py", ops);
  std::string cuda = replaced(kCuda, "import subprocess\n", "import subprocess\n\nsubprocess.DEVNULL\n");
  h.write("cuda.py", cuda);
  std::string recipe = h.tmp.path + "/r.yaml";
  auto r = h.sp({"capture", "handkern", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("left out") == std::string::npos);
  std::string text = testsupport::slurp(recipe);
  CHECK(text.find("# Left out") == std::string::npos);
  CHECK(text.find("  - module: handkern.ops\n"
                  "    replace:\n"
                  "      old: print(\"ops loaded\")\n"
                  "      new: print(\"ops loaded, patched\")\n") != std::string::npos);
  CHECK(text.find("      old: return x\n      new: return x + 0\n") != std::string::npos);
  CHECK(text.find("  - module: handkern.cuda\n"
                  "    replace:\n"
                  "      old: import subprocess\n"
                  "      new: |-\n"
                  "        import subprocess\n"
                  "\n"
                  "        subprocess.DEVNULL\n") != std::string::npos);
  CHECK(text.find("requires: handkern>=1.0,<1.1\n") != std::string::npos);
  CHECK(h.read("ops.py") == ops);
  CHECK(h.sp({"verify"}).status == 0);
  REQUIRE(h.sp({"rollback", "handkern-local"}).status == 0);
  CHECK(h.tree() == h.pip);
  // The recipe makes the same bytes on pip's.
  REQUIRE(h.sp({"apply", recipe}).status == 0);
  CHECK(h.read("ops.py") == ops);
  CHECK(h.read("cuda.py") == cuda);
  REQUIRE(h.sp({"rollback", "handkern-local"}).status == 0);
  CHECK(h.tree() == h.pip);
}

TEST_CASE("capture: a change no nearby text names is named by line and left out, the rest recorded",
          "[e2e][capture]") {
  Hand h;
  REQUIRE(h.sp({"edit", "handkern"}).status == 0);
  h.write("table.py", replaced(table_changed(), "    return ROWS\n", "    return list(ROWS)\n"));
  std::string ops = replaced(kOps, "    return x\n", "    return x + 0\n");
  h.write("ops.py", ops);
  h.write("data.txt", "changed data\n");
  std::string recipe = h.tmp.path + "/r.yaml";
  auto r = h.sp({"capture", "handkern", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("left out:\n"
                   "  handkern/table.py lines 17-17: outside any definition it can name (the file keeps it; the "
                   "recipe does not make it)\n"
                   "  handkern/data.txt: not Python source (its size is not RECORD's)\n") != std::string::npos);
  std::string text = testsupport::slurp(recipe);
  CHECK(text.find("# Left out (outside any definition it can name; the edited file keeps them, a fresh install\n"
                  "# will not get them from this recipe):\n#   handkern/table.py lines 17-17\n") != std::string::npos);
  CHECK(text.find("ROWS.append(1)") == std::string::npos);
  CHECK(text.find("    function: rows\n    replace-body: |\n      return list(ROWS)\n") != std::string::npos);
  CHECK(h.sp({"verify"}).status == 0);
  REQUIRE(h.sp({"rollback", "handkern-local"}).status == 0);
  CHECK(h.read("table.py") == table());
  CHECK(h.read("ops.py") == kOps);

  // A file whose only change no edit can name, beside another file's named edit: it goes
  // in whole (said so), so the record holds it and rollback gives pip's bytes.
  h.write("table.py", table_changed());
  std::string cuda = replaced(kCuda, "TIMEOUT = 30\n", "TIMEOUT = 300\n");
  h.write("cuda.py", cuda);
  auto mixed = h.sp({"capture", "handkern", "-o", h.tmp.path + "/mixed.yaml"});
  INFO(mixed.err);
  REQUIRE(mixed.status == 0);
  CHECK(mixed.err.find("  handkern/table.py: taken whole (replace-module: nothing it changed is inside a definition; "
                       "the recipe fits this version only), pip's bytes from ") != std::string::npos);
  std::string whole = testsupport::slurp(h.tmp.path + "/mixed.yaml");
  CHECK(whole.find("replace-module:") != std::string::npos);
  CHECK(whole.find("requires: handkern==1.0\n") != std::string::npos);
  CHECK(h.sp({"verify"}).status == 0);
  REQUIRE(h.sp({"rollback", "handkern-local"}).status == 0);
  CHECK(h.read("table.py") == table());  // data.txt, changed above, is not Python: left as it is
  CHECK(h.read("cuda.py") == kCuda);
  CHECK(h.record_says("table.py", table()));
  // And the recipe gives both back on pip's bytes.
  REQUIRE(h.sp({"apply", h.tmp.path + "/mixed.yaml"}).status == 0);
  CHECK(h.read("table.py") == table_changed());
  CHECK(h.read("cuda.py") == cuda);
}

TEST_CASE("capture: an import put above another is an ensure-import and nothing else, said in the recipe",
          "[e2e][capture]") {
  Hand h;
  REQUIRE(h.sp({"edit", "handkern"}).status == 0);
  std::string edited = "import functools\n" + replaced(kOps, "def fp4_quantize", "@functools.lru_cache(maxsize=None)\ndef fp4_quantize");
  h.write("ops.py", edited);
  std::string recipe = h.tmp.path + "/r.yaml";
  auto r = h.sp({"capture", "handkern", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("  handkern/ops.py:1: `import functools` is an ensure-import: the recipe puts it after the "
                   "module's imports (line 2); this file keeps it as you wrote it\n") != std::string::npos);
  CHECK(r.err.find("left out") == std::string::npos);
  std::string text = testsupport::slurp(recipe);
  CHECK(text.find("# Imports placed by hand beside others: this recipe's ensure-import puts them after the\n"
                  "# module's imports (the edited files, recorded as they are, keep yours):\n"
                  "#   handkern/ops.py: import functools (line 1 as edited, line 2 from this recipe)\n") !=
        std::string::npos);
  CHECK(text.find("    ensure-import: import functools\n") != std::string::npos);
  CHECK(text.find("    add-decorator: functools.lru_cache(maxsize=None)\n") != std::string::npos);
  CHECK(text.find("replace") == std::string::npos);
  CHECK(text.find("Left out") == std::string::npos);
  CHECK(h.read("ops.py") == edited);
  CHECK(h.sp({"verify"}).status == 0);
  REQUIRE(h.sp({"rollback", "handkern-local"}).status == 0);
  CHECK(h.tree() == h.pip);
  REQUIRE(h.sp({"apply", recipe}).status == 0);
  CHECK(h.read("ops.py") == replaced(edited.substr(std::string("import functools\n").size()),
                                     "from .cuda import get_cuda_version\n",
                                     "from .cuda import get_cuda_version\nimport functools\n"));
}

TEST_CASE("capture: edit --copy, edits made in the copy, capture --from writes them into the environment",
          "[e2e][capture]") {
  Hand h;
  std::string copy = h.tmp.path + "/work";
  auto saved = h.sp({"edit", "handkern", "--copy", copy});
  INFO(saved.err);
  REQUIRE(saved.status == 0);
  CHECK(saved.err.find("copied them to " + copy + "; edit them there\nthen: sitepatch --venv " + h.venv.root +
                       " capture handkern --from " + copy + "\n") != std::string::npos);
  CHECK(testsupport::slurp(copy + "/handkern/ops.py") == kOps);
  std::string ops = replaced(kOps, "def fp4_quantize(x):\n", "@functools.cache\ndef fp4_quantize(x):\n");
  testsupport::spit(copy + "/handkern/ops.py",
                    replaced(ops, "get_cuda_version\n", "get_cuda_version\nimport functools\n"));
  std::string recipe = h.tmp.path + "/c.yaml";
  auto r = h.sp({"capture", "handkern", "--from", copy, "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("recorded handkern-local as applied (the copy's files written)") != std::string::npos);
  CHECK(h.read("ops.py") == testsupport::slurp(copy + "/handkern/ops.py"));
  CHECK(h.sp({"verify"}).status == 0);
  REQUIRE(h.sp({"rollback", "--all"}).status == 0);
  CHECK(h.tree() == h.pip);
}

TEST_CASE("capture and edit refuse what they cannot do, naming it", "[e2e][capture]") {
  Hand h;
  auto unknown = h.sp({"capture", "handkrn"});
  CHECK(unknown.status == 1);
  CHECK(unknown.err == "sitepatch: error: no distribution named handkrn is installed in " + h.venv.root +
                           "; did you mean handkern?\n");
  h.write("ops.py", replaced(kOps, "    return x\n", "    return -x\n"));
  auto late = h.sp({"edit", "handkern"});
  CHECK(late.status == 1);
  CHECK(late.err == "sitepatch: error: handkern/ops.py of handkern 1.0 already differ from pip's bytes (RECORD): "
                    "capture them with --original WHEEL|DIR instead, or reinstall and run edit again; nothing was saved\n");
  std::string exists = h.tmp.path + "/exists.yaml";
  testsupport::spit(exists, "mine\n");
  auto kept = h.sp({"capture", "handkern", "--original", h.wheel, "-o", exists});
  CHECK(kept.status == 2);
  CHECK(kept.err == "sitepatch: error: " + exists + " exists; give -o another file (capture never overwrites a recipe)\n");
  CHECK(testsupport::slurp(exists) == "mine\n");
  // A dry run refuses what the real run would.
  auto dry = h.sp({"capture", "handkern", "--original", h.wheel, "--dry-run", "-o", exists});
  CHECK(dry.status == 2);
  // A copy folder that does not exist, or holds none of the sources; a copy never
  // replaces what is in a folder.
  auto typo = h.sp({"capture", "handkern", "--from", h.tmp.path + "/wrok"});
  CHECK(typo.status == 1);
  CHECK(typo.err == "sitepatch: error: --from " + h.tmp.path + "/wrok: no such folder\n");
  fs::create_directories(h.tmp.path + "/empty");
  auto empty = h.sp({"capture", "handkern", "--from", h.tmp.path + "/empty"});
  CHECK(empty.status == 1);
  CHECK(empty.err == "sitepatch: error: --from " + h.tmp.path + "/empty holds none of handkern's sources (edit --copy "
                     "puts them there)\n");
  testsupport::spit(h.tmp.path + "/work/notes.txt", "my edits\n");
  auto over = h.sp({"edit", "handkern", "--copy", h.tmp.path + "/work", "--dry-run"});
  CHECK(over.status == 1);
  CHECK(over.err == "sitepatch: error: --copy " + h.tmp.path + "/work exists and is not an empty folder: copy into "
                    "a new one (the files there would be replaced)\n");
  REQUIRE(h.sp({"capture", "handkern", "--original", h.wheel, "-o", h.tmp.path + "/one.yaml"}).status == 0);
  auto twice = h.sp({"capture", "handkern", "--original", h.wheel, "-o", h.tmp.path + "/two.yaml"});
  CHECK(twice.status == 1);
  CHECK(twice.err.find("a patch named handkern-local is already applied") != std::string::npos);
}

TEST_CASE("capture --whole-file: a file with a change no edit can name goes in whole", "[e2e][capture]") {
  Hand h;
  REQUIRE(h.sp({"edit", "handkern"}).status == 0);
  std::string ops = replaced(kOps, "    return x\n", "    return x + 0\n");
  h.write("ops.py", ops);
  h.write("table.py", table_changed());
  std::string recipe = h.tmp.path + "/w.yaml";
  auto r = h.sp({"capture", "handkern", "--whole-file", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("left out") == std::string::npos);
  CHECK(testsupport::slurp(recipe).find("  - module: handkern.table\n    replace-module: |\n") != std::string::npos);
  REQUIRE(h.sp({"rollback", "handkern-local"}).status == 0);
  CHECK(h.tree() == h.pip);
  REQUIRE(h.sp({"apply", recipe}).status == 0);
  CHECK(h.read("ops.py") == ops);
  CHECK(h.read("table.py") == table_changed());
  // A whole module replaced overlaps every other recipe's edit of that file.
  std::string other = h.tmp.path + "/other.yaml";
  testsupport::spit(other, "id: other\nedits:\n  - module: handkern.table\n"
                           "    replace: {old: 'ROWS = []', new: 'ROWS = list()'}\n");
  auto clash = h.sp({"apply", other});
  CHECK(clash.status == 1);
  CHECK(clash.err.find("handkern/table.py: recipe `handkern-local` replaced the whole module (handkern.table); two "
                       "recipes on one target cannot both be undone") != std::string::npos);
  // And the recipe asks for exactly the version its whole text is of.
  CHECK(testsupport::slurp(recipe).find("requires: handkern==1.0\n") != std::string::npos);
}

TEST_CASE("capture in a conda environment: conda's record holds the hashes, and follows the edited bytes",
          "[e2e][capture]") {
  e2e::DemoEnv env;
  std::string below = env.venv.site_packages.substr(env.venv.root.size() + 1) + "/";
  std::string original = "def probe():\n    return 1\n";
  testsupport::spit(env.site("fastjit/__init__.py"), original);
  // A conda package with no dist-info: its record lists each file with its hash.
  nlohmann::json paths = nlohmann::json::array();
  paths.push_back({{"_path", below + "fastjit/__init__.py"},
                   {"path_type", "hardlink"},
                   {"sha256", sitepatch::util::sha256_hex(original)},
                   {"sha256_in_prefix", sitepatch::util::sha256_hex(original)},
                   {"size_in_bytes", original.size()}});
  nlohmann::json doc = {{"name", "fastjit"},
                        {"version", "0.3.1"},
                        {"files", {below + "fastjit/__init__.py"}},
                        {"paths_data", {{"paths", paths}, {"paths_version", 1}}}};
  std::string record = env.venv.root + "/conda-meta/fastjit-0.3.1-py_0.json";
  testsupport::spit(record, doc.dump(2) + "\n");
  auto saved = env.sp({"edit", "fastjit"});
  INFO(saved.err);
  REQUIRE(saved.status == 0);
  CHECK(saved.err.find("saved pip's bytes of 1 Python file(s) of fastjit 0.3.1") != std::string::npos);

  std::string edited = "import functools\n\n\n@functools.cache\ndef probe():\n    return 1\n";
  testsupport::spit(env.site("fastjit/__init__.py"), edited);
  std::string recipe = env.tmp.path + "/fastjit.yaml";
  auto r = env.sp({"capture", "fastjit", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(testsupport::slurp(recipe).find("  - module: fastjit\n    function: probe\n    add-decorator: functools.cache\n") !=
        std::string::npos);
  auto after = nlohmann::json::parse(testsupport::slurp(record));
  CHECK(after["paths_data"]["paths"][0]["sha256_in_prefix"] == sitepatch::util::sha256_hex(edited));
  CHECK(env.sp({"verify"}).status == 0);
  REQUIRE(env.sp({"rollback", "fastjit-local"}).status == 0);
  CHECK(env.read("fastjit/__init__.py") == original);
  CHECK(nlohmann::json::parse(testsupport::slurp(record))["paths_data"]["paths"][0]["sha256_in_prefix"] ==
        sitepatch::util::sha256_hex(original));
}

TEST_CASE("capture refuses a distribution that lists no hashes, naming it", "[e2e][capture]") {
  Hand h;
  // An egg-info lists its files without hashes (as Debian's python3-* packages do).
  std::string egg = h.venv.site_packages + "/oldkern-2.0.egg-info";
  fs::create_directories(egg);
  testsupport::spit(egg + "/PKG-INFO", "Metadata-Version: 1.1\nName: oldkern\nVersion: 2.0\n\n");
  testsupport::spit(egg + "/installed-files.txt", "../oldkern.py\n");
  testsupport::spit(h.venv.site_packages + "/oldkern.py", "X = 1\n");
  auto r = h.sp({"capture", "oldkern"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: oldkern 2.0 lists no hash of its files (oldkern-2.0.egg-info): capture tells "
                 "edited files from the hashes pip's RECORD or conda's record keeps\n");
}

TEST_CASE("edit on a distribution a patch holds saves pip's bytes, not the patched ones", "[e2e][capture]") {
  Hand h;
  std::string fix = h.tmp.path + "/fix.yaml";
  testsupport::spit(fix, "id: fix\nedits:\n  - module: handkern.ops\n    function: fp4_quantize\n"
                         "    replace-body: return x\n");
  REQUIRE(h.sp({"apply", fix}).status == 0);
  REQUIRE(h.sp({"edit", "handkern"}).status == 0);
  REQUIRE(h.sp({"rollback", "fix"}).status == 0);
  CHECK(h.tree() == h.pip);
  // Hand edits after the rollback: the history's copy is pip's, so capture needs nothing else.
  h.write("ops.py", replaced(kOps, "    return x\n", "    return x * 3\n"));
  auto r = h.sp({"capture", "handkern", "--dry-run"}, {{"HOME", h.tmp.path}, {"XDG_CACHE_HOME", ""}});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("handkern/ops.py: 1 edit(s), pip's bytes from the history (sitepatch edit)") != std::string::npos);
}

TEST_CASE("capture: a custom op made by hand becomes a recipe that reproduces it, and rollback gives pip's bytes",
          "[e2e][capture]") {
  Hand h;
  REQUIRE(h.sp({"edit", "handkern"}).status == 0);
  std::string ops = replaced(kOps, "def fp4_quantize(x):\n",
                             "@torch.library.custom_op(\"handkern::fp4_quantize\", mutates_args=(), "
                             "schema=\"(Tensor x) -> Tensor\")\ndef fp4_quantize(x):\n");
  ops = replaced(ops, "    return x\n",
                 "    return x\n\n\n@fp4_quantize.register_fake\ndef _fp4_quantize_fake(x):\n    return torch.empty_like(x)\n");
  ops = replaced(ops, "from .cuda import get_cuda_version\n", "from .cuda import get_cuda_version\nimport torch\n");
  h.write("ops.py", ops);
  std::string recipe = h.tmp.path + "/captured.yaml";
  auto c = h.sp({"capture", "handkern", "-o", recipe});
  INFO(c.out + c.err);
  REQUIRE(c.status == 0);
  CHECK(h.sp({"verify"}).status == 0);
  // The recipe, applied to a fresh install, writes the same bytes.
  auto back = h.sp({"rollback", "handkern-local"});
  INFO(back.err);
  REQUIRE(back.status == 0);
  CHECK(h.tree() == h.pip);
  auto again = h.sp({"apply", recipe});
  INFO(again.err);
  REQUIRE(again.status == 0);
  CHECK(h.read("ops.py") == ops);
}

// A wheel from PyPI (pinned), downloaded once into the tests' cache.
static std::string pypi_wheel(const testsupport::Venv& venv, const std::string& req, const std::string& file) {
  const char* home = std::getenv("HOME");
  std::string dir = std::string(home ? home : "/tmp") + "/.cache/sitepatch-tests/pypi";
  if (!fs::exists(dir + "/" + file)) venv.pip({"download", "--no-deps", "--only-binary=:all:", "-d", dir, req});
  REQUIRE(fs::exists(dir + "/" + file));
  return dir + "/" + file;
}

TEST_CASE("capture on PyPI's requests 2.32.3: natural hand edits become the recipe a person writes, and rollback gives "
          "pip's bytes",
          "[e2e][capture]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  venv.install(pypi_wheel(venv, "requests==2.32.3", "requests-2.32.3-py3-none-any.whl"));
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  };
  std::string path = venv.site_packages + "/requests/sessions.py";
  auto pip = e2e::read_tree(venv.site_packages + "/requests");
  std::string original = testsupport::slurp(path);
  REQUIRE(sp({"edit", "requests"}).status == 0);
  // As a person does it: the import beside its neighbours, a decorator, one value in a
  // method, one module-level line.
  std::string edited = replaced(original, "import os\nimport sys\n", "import functools\nimport os\nimport sys\n");
  edited = replaced(edited, "\ndef session():\n", "\n@functools.lru_cache(maxsize=None)\ndef session():\n");
  edited = replaced(edited, "        self.max_redirects = DEFAULT_REDIRECT_LIMIT\n", "        self.max_redirects = 50\n");
  edited = replaced(edited, "    preferred_clock = time.time\n", "    preferred_clock = time.monotonic\n");
  testsupport::spit(path, edited);

  std::string recipe = tmp.path + "/requests.yaml";
  auto r = sp({"capture", "requests", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("left out") == std::string::npos);
  std::string text = testsupport::slurp(recipe);
  INFO(text);
  CHECK(text.find("Left out") == std::string::npos);
  CHECK(text.find("replace-function") == std::string::npos);
  CHECK(text.find("#   requests/sessions.py: import functools (line 8 as edited, line ") != std::string::npos);
  CHECK(text.find("  - module: requests.sessions\n    ensure-import: import functools\n") != std::string::npos);
  CHECK(text.find("    function: session\n    add-decorator: functools.lru_cache(maxsize=None)\n") !=
        std::string::npos);
  CHECK(text.find("    function: Session.__init__\n    replace:\n      old: self.max_redirects = DEFAULT_REDIRECT_LIMIT\n"
                  "      new: self.max_redirects = 50\n") != std::string::npos);
  CHECK(text.find("  - module: requests.sessions\n    replace:\n      old: preferred_clock = time.time\n"
                  "      new: preferred_clock = time.monotonic\n") != std::string::npos);
  CHECK(sp({"verify"}).status == 0);

  REQUIRE(sp({"rollback", "requests-local"}).status == 0);
  CHECK(e2e::read_tree(venv.site_packages + "/requests") == pip);
  CHECK(sp({"verify"}).status == 0);
  // On pip's bytes the recipe makes the same file, the import after the module's imports.
  REQUIRE(sp({"apply", recipe}).status == 0);
  std::string applied = testsupport::slurp(path);
  CHECK(replaced(applied, "import functools\n", "") == replaced(edited, "import functools\n", ""));
  REQUIRE(sp({"rollback", "requests-local"}).status == 0);
  CHECK(testsupport::slurp(path) == original);
}

TEST_CASE("capture: an edited module that is a link leading outside site-packages is named as such, nothing written",
          "[e2e][capture]") {
  Hand h;
  REQUIRE(h.sp({"edit", "handkern"}).status == 0);
  h.edit_by_hand();
  // The edited cuda.py now lives outside the environment; the package holds a link to it.
  std::string outside = h.tmp.path + "/shared/cuda.py";
  testsupport::spit(outside, h.read("cuda.py"));
  fs::remove(h.path("cuda.py"));
  fs::create_symlink(outside, h.path("cuda.py"));
  auto before = h.tree();
  std::string recipe = h.tmp.path + "/handkern-local.yaml";
  auto r = h.sp({"capture", "handkern", "-o", recipe});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: handkern/cuda.py is a symbolic link to " + outside +
                     ", outside site-packages: sitepatch patches only files inside it, so no recipe could make this "
                     "edit; put the file itself in place of the link, or capture where " + outside +
                     " is installed\n");
  CHECK(r.err.find("a sitepatch bug") == std::string::npos);
  CHECK_FALSE(fs::exists(recipe));
  CHECK(h.tree() == before);
}

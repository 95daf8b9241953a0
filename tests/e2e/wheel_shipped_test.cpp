// Issue 52 item 2: in an environment that installed a patched wheel, apply and sync know
// its recipes from the dist-info (shipped patched, never "upstream has the fix"); what
// `wheel` refuses writes nothing: an edit that fails, a module its compiled twin
// shadows, a version PEP 440 cannot read, a file that is no wheel, an unsafe member.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "sitepatch/util/hash.hpp"

#include "wheel_support.hpp"

namespace fs = std::filesystem;
using e2e::WheelCase;
using testsupport::run_sitepatch;
using testsupport::slurp;

namespace {

std::string built_wheel(const WheelCase& c) {
  auto r = c.build(c.tmp.path + "/out");
  INFO(r.err);
  REQUIRE(r.status == 0);
  return sitepatch::util::trim(r.out);
}

/// A fresh venv with the wheel `c` builds installed by pip.
testsupport::Venv venv_with_built_wheel(const WheelCase& c) {
  testsupport::Venv venv = testsupport::Venv::create(c.tmp.path + "/venv");
  venv.install(built_wheel(c));
  return venv;
}

size_t commits(const std::string& venv) {
  if (!fs::exists(venv + "/.sitepatch")) return 0;
  auto r = sitepatch::util::run({"git", "--git-dir", venv + "/.sitepatch", "rev-list", "--count", "HEAD"});
  return r.status == 0 ? std::stoul(r.out) : 0;
}

}  // namespace

TEST_CASE("wheel: apply and sync where the patched wheel is installed say shipped patched and write nothing",
          "[e2e][wheel]") {
  WheelCase c;
  testsupport::Venv venv = venv_with_built_wheel(c);
  std::string project = c.tmp.path + "/project";
  testsupport::spit(project + "/patches/flashinfer-dynamo.yaml", slurp(c.recipe));

  auto apply = run_sitepatch({"--venv", venv.root, "apply", c.recipe});
  INFO(apply.err);
  CHECK(apply.status == 0);
  CHECK(apply.err.find("shipped  flashinfer-dynamo: shipped patched: the installed flashinfer-python 0.5.3+sitepatch.") !=
        std::string::npos);
  CHECK(apply.err.find("nothing written: flashinfer-dynamo shipped patched with the installed version") != std::string::npos);
  CHECK(apply.err.find("upstream") == std::string::npos);
  auto json = run_sitepatch({"--venv", venv.root, "--json", "plan", c.recipe});
  CHECK(nlohmann::json::parse(json.out)["shipped"] == nlohmann::json::array({"flashinfer-dynamo"}));

  auto check = run_sitepatch({"--venv", venv.root, "sync", "--check", project + "/patches"});
  CHECK(check.status == 0);
  CHECK(check.out.find("in sync    flashinfer-dynamo  shipped patched in flashinfer-python 0.5.3+sitepatch.") !=
        std::string::npos);
  CHECK(run_sitepatch({"--venv", venv.root, "sync", project + "/patches"}).status == 0);
  CHECK(commits(venv.root) == 0);

  // Another content under the same id: sync cannot take the wheel's edits away.
  testsupport::spit(project + "/patches/flashinfer-dynamo.yaml", slurp(c.recipe) + "# reviewed\n");
  auto other = run_sitepatch({"--venv", venv.root, "sync", project + "/patches"});
  CHECK(other.status == 1);
  CHECK(other.err.find("flashinfer-dynamo: the installed flashinfer-python 0.5.3+sitepatch.") != std::string::npos);
  CHECK(other.err.find("came patched with another content of flashinfer-dynamo: install the wheel sitepatch --venv " +
                       venv.root + " wheel " + project + "/patches/flashinfer-dynamo.yaml makes, or the unpatched one") !=
        std::string::npos);
  auto wcheck = run_sitepatch({"--venv", venv.root, "wheel", project + "/patches", "--check"});
  CHECK(wcheck.status == 3);
  CHECK(wcheck.out.find("other     flashinfer-dynamo  flashinfer-python 0.5.3+sitepatch.") != std::string::npos);
}

TEST_CASE("wheel: a patch applied here, then the patched wheel installed over it, is dropped as shipped",
          "[e2e][wheel]") {
  WheelCase c;
  std::string wheel = built_wheel(c);
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", c.recipe}).status == 0);
  env.venv.pip({"install", "-q", "--no-index", "--no-deps", wheel});
  auto sync = env.sp({"sync", c.recipe});
  INFO(sync.err);
  CHECK(sync.status == 0);
  CHECK(sync.err.find("every edit is already in the installed version (upstream has the fix)") == std::string::npos);
  auto list = nlohmann::json::parse(env.sp({"--json", "list"}).out)["patches"];
  REQUIRE(list.size() == 1);
  CHECK_FALSE(list[0]["shipped"].is_null());
}

TEST_CASE("wheel: what it refuses writes nothing, and says why", "[e2e][wheel]") {
  WheelCase c;
  std::string out = c.tmp.path + "/out";
  auto missing = c.tmp.path + "/missing.yaml";
  testsupport::spit(missing, "id: missing\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_vresion\n"
                             "    replace-body: |\n      return None\n");
  fs::create_directories(out);
  auto r = run_sitepatch({"wheel", missing, "--from", c.source, "-o", out});
  CHECK(r.status == 1);
  CHECK(r.err.find(missing + ":3:3: fails  missing  flashinfer.jit.cpp_ext:get_cuda_vresion  replace-body") !=
        std::string::npos);
  CHECK(r.err.find("nearest: get_cuda_version") != std::string::npos);
  CHECK(r.err.find("sitepatch: error: wheel: nothing written: an edit fails on flashinfer_python-0.5.3-py3-none-any.whl (above)") !=
        std::string::npos);
  CHECK(fs::is_empty(out));

  auto dry = c.build(out, {"--dry-run"});
  CHECK(dry.status == 0);
  CHECK(dry.out.find("+    return Version(torch.version.cuda)") != std::string::npos);
  CHECK(fs::is_empty(out));

  auto version = c.build(out, {"--version", "not a version"});
  CHECK(version.status == 2);
  CHECK(version.err.find("--version not a version is not a version PEP 440 reads") != std::string::npos);

  testsupport::spit(c.tmp.path + "/bad.whl", slurp(c.source));
  auto name = run_sitepatch({"wheel", c.recipe, "--from", c.tmp.path + "/bad.whl", "-o", out});
  CHECK(name.status == 2);
  CHECK(name.err.find(c.tmp.path + "/bad.whl: not a wheel's file name (NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl)") !=
        std::string::npos);

  std::string evil = c.tmp.path + "/evil-1.0-py3-none-any.whl";
  sitepatch::util::run({testsupport::outer_python(), "-c",
                        "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], 'w')\n"
                        "z.writestr('evil-1.0.dist-info/METADATA', 'Name: evil\\nVersion: 1.0\\n')\n"
                        "z.writestr('evil-1.0.dist-info/RECORD', '')\nz.writestr('../escape.py', 'x = 1\\n')\n",
                        evil});
  auto unsafe = run_sitepatch({"wheel", c.recipe, "--from", evil, "-o", out});
  CHECK(unsafe.status == 1);
  CHECK(unsafe.err.find(evil + ": refusing a wheel whose member ../escape.py is unsafe") != std::string::npos);
  CHECK(fs::is_empty(out));
  CHECK_FALSE(fs::exists(c.tmp.path + "/escape.py"));

  auto option = run_sitepatch({"wheel", c.recipe, "--download", "-r/etc/passwd", "-o", out});
  CHECK(option.status == 2);
  CHECK(option.err == "sitepatch: error: wheel --download -r/etc/passwd: give one pinned distribution, NAME==VERSION\n");

  auto over = run_sitepatch({"wheel", c.recipe, "--from", c.source, "--version", "0.5.3", "-o", c.tmp.path + "/src"});
  CHECK(over.status == 2);
  CHECK(over.err.find("wheel: the patched wheel would replace its source, " + c.source) != std::string::npos);

  auto again = c.build(c.tmp.path + "/once");
  REQUIRE(again.status == 0);
  auto twice = run_sitepatch({"wheel", c.recipe, "--from", sitepatch::util::trim(again.out), "-o", out});
  CHECK(twice.status == 1);
  CHECK(twice.err.find("was written by sitepatch wheel (its dist-info keeps sitepatch/provenance.json): build from the "
                       "wheel it was made from, with every recipe at once") != std::string::npos);
  CHECK(fs::is_empty(out));

  auto neither = run_sitepatch({"wheel", c.recipe, "-o", out});
  CHECK(neither.status == 2);
  CHECK(neither.err.find("wheel: give --from WHEEL or --download NAME==VERSION (or --check)") != std::string::npos);
}

TEST_CASE("wheel: a wheel with compiled modules and a .data folder is patched in its .py files, and a shadowed "
          "module is refused",
          "[e2e][wheel]") {
  testsupport::TempDir tmp;
  std::string so = std::string("\x7f" "ELF", 4) + std::string(64, '\0');
  std::string wheel = testsupport::build_wheel(
      {"fastpkg", "1.0",
       {{"fastpkg/__init__.py", ""},
        {"fastpkg/mod.py", "def f():\n    return 1\n"},
        {"fastpkg/mod.cpython-311-x86_64-linux-gnu.so", so},
        {"fastpkg/helpers.py", "def g():\n    return 2\n"},
        {"fastpkg-1.0.data/purelib/fastpkg/extra.py", "def h():\n    return 3\n"}}},
      tmp.path + "/src");
  std::string shadowed = tmp.path + "/shadowed.yaml", plain = tmp.path + "/plain.yaml";
  testsupport::spit(shadowed, "id: shadowed\nedits:\n  - module: fastpkg.mod\n    function: f\n    replace-body: |\n"
                              "      return 10\n");
  testsupport::spit(plain, "id: plain\nedits:\n  - module: fastpkg.helpers\n    function: g\n    replace-body: |\n"
                           "      return 20\n  - module: fastpkg.extra\n    function: h\n    replace-body: |\n"
                           "      return 30\n");
  std::string out = tmp.path + "/out";
  fs::create_directories(out);
  auto refused = run_sitepatch({"wheel", shadowed, "--from", wheel, "-o", out});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("fastpkg/mod.cpython-311-x86_64-linux-gnu.so") != std::string::npos);
  CHECK(fs::is_empty(out));

  auto ok = run_sitepatch({"wheel", plain, "--from", wheel, "-o", out});
  INFO(ok.err);
  REQUIRE(ok.status == 0);
  CHECK(ok.err.find("note: fastpkg-1.0-py3-none-any.whl is not pure Python: only its .py files were patched; its 1 "
                    "compiled module(s) are copied as they are") != std::string::npos);
  std::string patched = sitepatch::util::trim(ok.out);
  CHECK(e2e::wheel_member(patched, "fastpkg/mod.cpython-311-x86_64-linux-gnu.so") == so);
  CHECK(e2e::wheel_member(patched, "fastpkg/helpers.py") == "def g():\n    return 20\n");
  std::string label = patched.substr(patched.find("+sitepatch.") + 1, std::string("sitepatch.12345678").size());
  CHECK(e2e::wheel_member(patched, "fastpkg-1.0+" + label + ".data/purelib/fastpkg/extra.py") ==
        "def h():\n    return 30\n");
  CHECK(e2e::wheel_problems(patched) == "");
  // pip puts the .data folder's purelib into site-packages, where the edit is.
  testsupport::Venv venv = testsupport::Venv::create(tmp.path + "/venv");
  venv.install(patched);
  CHECK(slurp(venv.site_packages + "/fastpkg/extra.py") == "def h():\n    return 30\n");
  CHECK(run_sitepatch({"--venv", venv.root, "verify", "plain"}).status == 0);
}

TEST_CASE("wheel: a provenance is believed only for its own files as shipped, and a malformed one is skipped",
          "[e2e][wheel]") {
  WheelCase c;
  testsupport::Venv venv = venv_with_built_wheel(c);
  std::string cpp_ext = venv.site_packages + "/flashinfer/jit/cpp_ext.py";
  std::string patched = slurp(cpp_ext);

  // The shipped file put back as it was: sync applies the recipe again, not "in sync".
  std::string original = e2e::wheel_member(c.source, "flashinfer/jit/cpp_ext.py");
  testsupport::spit(cpp_ext, original);
  auto check = run_sitepatch({"--venv", venv.root, "sync", "--check", c.recipe});
  CHECK(check.status == 3);
  CHECK(check.out.find("apply      flashinfer-dynamo  not applied") == 0);
  REQUIRE(run_sitepatch({"--venv", venv.root, "sync", c.recipe}).status == 0);
  CHECK(slurp(cpp_ext) == patched);
  // A record made while the wheel is installed is dropped once its files are as shipped.
  auto settle = run_sitepatch({"--venv", venv.root, "sync", c.recipe});
  INFO(settle.out + settle.err);
  CHECK(settle.status == 0);
  CHECK(run_sitepatch({"--venv", venv.root, "sync", "--check", c.recipe}).out.find("in sync    flashinfer-dynamo  shipped") == 0);
  auto listed = nlohmann::json::parse(run_sitepatch({"--venv", venv.root, "--json", "list"}).out)["patches"];
  CHECK(listed.size() == 1);

  // Another distribution's dist-info claiming the recipe, with the unpatched bytes' hash:
  // not believed (the file is not its own), and shown as such.
  testsupport::spit(cpp_ext, original);
  std::string fake = venv.site_packages + "/zzz-1.0.dist-info";
  testsupport::spit(fake + "/METADATA", "Metadata-Version: 2.1\nName: zzz\nVersion: 1.0\n");
  testsupport::spit(fake + "/RECORD", "zzz-1.0.dist-info/METADATA,,\n");
  testsupport::spit(fake + "/sitepatch/provenance.json",
                    nlohmann::json({{"format", 1},
                                    {"recipes", {{{"id", "flashinfer-dynamo"},
                                                  {"sha256", sitepatch::util::sha256_hex(slurp(c.recipe))}}}},
                                    {"files", {{{"path", "flashinfer/jit/cpp_ext.py"},
                                                {"after", sitepatch::util::sha256_hex(original)}}}}})
                        .dump());
  // (the real wheel's dist-info is there too; take it out of the way)
  for (auto& e : fs::directory_iterator(venv.site_packages))
    if (e.path().filename().string().find("+sitepatch.") != std::string::npos) fs::remove_all(e.path() / "sitepatch");
  auto spoofed = run_sitepatch({"--venv", venv.root, "wheel", c.recipe, "--check"});
  CHECK(spoofed.status == 3);
  CHECK(spoofed.out.find("changed   flashinfer-dynamo  zzz 1.0: flashinfer/jit/cpp_ext.py is not a file it installed") ==
        0);
  auto verify = run_sitepatch({"--venv", venv.root, "verify", "flashinfer-dynamo"});
  CHECK(verify.status == 3);
  CHECK(verify.out.find("not a file zzz-1.0.dist-info installed (its RECORD does not list it)") != std::string::npos);
  CHECK(run_sitepatch({"--venv", venv.root, "sync", "--check", c.recipe}).status == 3);

  // A provenance of the wrong shape: a warning naming it, and every command goes on.
  testsupport::spit(fake + "/sitepatch/provenance.json", "{\"format\": \"1\", \"recipes\": 5}");
  auto list = run_sitepatch({"--venv", venv.root, "list"});
  CHECK(list.status == 0);
  CHECK(list.err.find(fake + "/sitepatch/provenance.json: not a provenance sitepatch wrote (format 1)") !=
        std::string::npos);
  testsupport::spit(fake + "/sitepatch/provenance.json",
                    "{\"format\": 1, \"built_by\": 7, \"source\": {\"wheel\": [1]}, \"recipes\": [{\"id\": 5}, "
                    "{\"id\": \"x\", \"sha256\": null}], \"files\": [{\"path\": 1}, {\"path\": \"../../etc/passwd\"}]}");
  auto odd = run_sitepatch({"--venv", venv.root, "--json", "list"});
  CHECK(odd.status == 0);
  auto x = nlohmann::json::parse(odd.out)["patches"];
  REQUIRE(x.size() == 1);
  CHECK(x[0]["id"] == "x");
  CHECK(x[0]["state"] == "modified");
}

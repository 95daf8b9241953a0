// Issue 52 item 2: `sitepatch wheel` writes the patched wheel: pip and uv install it into
// a fresh venv and its modules carry the edits; the same inputs give the same sha256;
// list, verify and wheel --check read what it shipped from the installed dist-info.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "sitepatch/util/hash.hpp"
#include "wheel_support.hpp"

namespace fs = std::filesystem;
using e2e::WheelCase;
using testsupport::run_sitepatch;
using testsupport::slurp;

namespace {

const char* kReturn = "    return Version(torch.version.cuda)\n";

std::string only_file(const std::string& dir) {
  std::vector<std::string> found;
  for (auto& e : fs::directory_iterator(dir)) found.push_back(e.path().string());
  REQUIRE(found.size() == 1);
  return found[0];
}

}  // namespace

TEST_CASE("wheel: the patched wheel is pip's to install, carries the edits, and is byte-reproducible",
          "[e2e][wheel]") {
  WheelCase c;
  auto first = c.build(c.tmp.path + "/out1");
  INFO(first.err);
  REQUIRE(first.status == 0);
  std::string wheel = only_file(c.tmp.path + "/out1");
  CHECK(sitepatch::util::trim(first.out) == wheel);
  std::smatch m;
  std::string name = fs::path(wheel).filename().string();
  REQUIRE(std::regex_match(name, m, std::regex(R"(flashinfer_python-0\.5\.3\+sitepatch\.([0-9a-f]{8})-py3-none-any\.whl)")));
  CHECK(first.err.find("flashinfer-python 0.5.3 -> 0.5.3+sitepatch." + m[1].str() + ", 2 file(s) patched") !=
        std::string::npos);
  CHECK(e2e::wheel_problems(wheel) == "");
  auto dry = c.build(c.tmp.path + "/dry", {"--json", "--dry-run"});
  CHECK(dry.status == 0);
  CHECK(e2e::wheel_schema_violations(dry.out) == "");
  auto doc = nlohmann::json::parse(dry.out);
  CHECK(doc["output"] == c.tmp.path + "/dry/" + name);
  CHECK(doc["sha256"].is_null());
  CHECK(doc["written"] == false);
  CHECK(doc["version"]["to"] == "0.5.3+sitepatch." + m[1].str());
  CHECK(doc["plan"]["files"].size() == 2);
  CHECK(fs::is_empty(c.tmp.path + "/dry"));

  // Another time zone, another minute, another folder: the same bytes.
  auto second = c.build(c.tmp.path + "/out2", {}, {{"TZ", "Pacific/Auckland"}});
  REQUIRE(second.status == 0);
  CHECK(slurp(only_file(c.tmp.path + "/out2")) == slurp(wheel));
  CHECK(second.err.find("sha256 " + sitepatch::util::sha256_hex(slurp(wheel))) != std::string::npos);

  // Two recipes, in either order on the command line: one wheel, byte for byte.
  std::string path = c.tmp.path + "/cuda-path.yaml";
  testsupport::spit(path, "id: cuda-path\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_path\n"
                          "    replace-body: |\n      return \"/usr/local/cuda\"\n");
  fs::create_directories(c.tmp.path + "/ab");
  fs::create_directories(c.tmp.path + "/ba");
  REQUIRE(run_sitepatch({"wheel", c.recipe, path, "--from", c.source, "-o", c.tmp.path + "/ab"}).status == 0);
  REQUIRE(run_sitepatch({"wheel", path, c.recipe, "--from", c.source, "-o", c.tmp.path + "/ba"}).status == 0);
  CHECK(slurp(only_file(c.tmp.path + "/ab")) == slurp(only_file(c.tmp.path + "/ba")));

  std::string info = "flashinfer_python-0.5.3+sitepatch." + m[1].str() + ".dist-info/";
  CHECK(e2e::wheel_member(wheel, info + "METADATA").find("\nVersion: 0.5.3+sitepatch." + m[1].str() + "\n") !=
        std::string::npos);
  CHECK(e2e::wheel_member(wheel, info + "sitepatch/recipes/flashinfer-dynamo.yaml") == slurp(c.recipe));
  auto prov = nlohmann::json::parse(e2e::wheel_member(wheel, info + "sitepatch/provenance.json"));
  CHECK(prov["source"]["wheel"] == "flashinfer_python-0.5.3-py3-none-any.whl");
  CHECK(prov["source"]["sha256"] == sitepatch::util::sha256_hex(slurp(c.source)));
  CHECK(prov["recipes"][0]["sha256"] == sitepatch::util::sha256_hex(slurp(c.recipe)));
  CHECK(prov["files"].size() == 2);

  testsupport::Venv venv = testsupport::Venv::create(c.tmp.path + "/venv");
  venv.install(wheel);
  CHECK(slurp(venv.site_packages + "/flashinfer/jit/cpp_ext.py").find(kReturn) != std::string::npos);
  CHECK(slurp(venv.site_packages + "/flashinfer/fp4_quantization.py").find("@torch.compiler.disable\ndef fp4_quantize") !=
        std::string::npos);
  CHECK(venv.pip({"show", "flashinfer-python"}).out.find("Version: 0.5.3+sitepatch." + m[1].str()) != std::string::npos);

  auto list = run_sitepatch({"--venv", venv.root, "--json", "list"});
  REQUIRE(list.status == 0);
  auto patches = nlohmann::json::parse(list.out)["patches"];
  REQUIRE(patches.size() == 1);
  CHECK(patches[0]["id"] == "flashinfer-dynamo");
  CHECK(patches[0]["state"] == "applied");
  CHECK(patches[0]["distribution"] == "flashinfer-python==0.5.3+sitepatch." + m[1].str());
  CHECK(patches[0]["shipped"].get<std::string>().find("(built from flashinfer_python-0.5.3-py3-none-any.whl)") !=
        std::string::npos);
  auto text = run_sitepatch({"--venv", venv.root, "list"});
  CHECK(text.out.find("shipped (wheel)") != std::string::npos);
  CHECK(run_sitepatch({"--venv", venv.root, "verify"}).status == 0);
  auto in_sync = run_sitepatch({"--venv", venv.root, "--json", "wheel", c.recipe, "--check"});
  CHECK(in_sync.status == 0);
  CHECK(e2e::wheel_schema_violations(in_sync.out) == "");
  CHECK(nlohmann::json::parse(in_sync.out)["recipes"][0]["state"] == "shipped");

  // A hand change of a shipped file: verify and --check say which file.
  testsupport::spit(venv.site_packages + "/flashinfer/jit/cpp_ext.py",
                    slurp(venv.site_packages + "/flashinfer/jit/cpp_ext.py") + "# tweak\n");
  auto verify = run_sitepatch({"--venv", venv.root, "verify", "flashinfer-dynamo"});
  CHECK(verify.status == 3);
  CHECK(verify.out.find("flashinfer/jit/cpp_ext.py  modified  (not the bytes flashinfer_python-0.5.3+sitepatch." +
                        m[1].str() + ".dist-info shipped)") != std::string::npos);
  auto check = run_sitepatch({"--venv", venv.root, "wheel", c.recipe, "--check"});
  CHECK(check.status == 3);
  CHECK(check.out.find("changed   flashinfer-dynamo  flashinfer-python 0.5.3+sitepatch." + m[1].str() +
                       ": flashinfer/jit/cpp_ext.py is modified since it was installed") != std::string::npos);
}

TEST_CASE("wheel: uv pip install takes the patched wheel, and --version names it", "[e2e][wheel]") {
  WheelCase c;
  // A version as PEP 440 normalizes it: pip compares the file name with METADATA.
  auto built = c.build(c.tmp.path + "/out", {"--version", "0.5.3-1+ACME"});
  INFO(built.err);
  REQUIRE(built.status == 0);
  std::string wheel = only_file(c.tmp.path + "/out");
  CHECK(fs::path(wheel).filename() == "flashinfer_python-0.5.3.post1+acme-py3-none-any.whl");
  CHECK(e2e::wheel_problems(wheel) == "");

  testsupport::Venv venv = testsupport::Venv::create(c.tmp.path + "/venv");
  auto uv = sitepatch::util::run({e2e::uv_binary(), "pip", "install", "--offline", "--no-cache", "--no-deps",
                                  "--python", venv.python, wheel});
  INFO(uv.err);
  REQUIRE(uv.status == 0);
  CHECK(slurp(venv.site_packages + "/flashinfer/jit/cpp_ext.py").find(kReturn) != std::string::npos);
  auto list = run_sitepatch({"--venv", venv.root, "--json", "list"});
  REQUIRE(list.status == 0);
  auto patches = nlohmann::json::parse(list.out)["patches"];
  REQUIRE(patches.size() == 1);
  CHECK(patches[0]["distribution"] == "flashinfer-python==0.5.3.post1+acme");
  CHECK(run_sitepatch({"--venv", venv.root, "verify"}).status == 0);
}

TEST_CASE("wheel --download: pip fetches the wheel from the index pip is given", "[e2e][wheel]") {
  WheelCase c;
  REQUIRE(c.build(c.tmp.path + "/from").status == 0);
  fs::create_directories(c.tmp.path + "/fetched");
  auto r = run_sitepatch({"wheel", c.recipe, "--download", "flashinfer-python==0.5.3", "-o", c.tmp.path + "/fetched"},
                         {{"PIP_NO_INDEX", "1"}, {"PIP_FIND_LINKS", c.tmp.path + "/src"}});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(slurp(only_file(c.tmp.path + "/fetched")) == slurp(only_file(c.tmp.path + "/from")));

  auto missing = run_sitepatch({"wheel", c.recipe, "--download", "flashinfer-python==9.9", "-o", c.tmp.path + "/fetched"},
                               {{"PIP_NO_INDEX", "1"}, {"PIP_FIND_LINKS", c.tmp.path + "/src"}});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("sitepatch: error: wheel --download flashinfer-python==9.9: pip download exited 1:") != std::string::npos);
  CHECK(missing.err.find("No matching distribution found for flashinfer-python==9.9") != std::string::npos);
}

// A call out of the walked program into a module the environment does not have
// (FlashInfer HEAD's `tvm_ffi.load_module` where tvm_ffi is not installed): counted and
// named in the first line, in --json, failing --strict, and in explain's walk too.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

const char* kLoader =
    "import json\n"
    "import os\n"
    "\n"
    "import tvm_ffi\n"
    "from tvm_ffi import load_module as _load\n"
    "\n"
    "\n"
    "def load(path):\n"
    "    spec = json.dumps({'path': path})\n"
    "    if len(spec) > 1:\n"
    "        return tvm_ffi.load_module(path)\n"
    "    return _load(os.fspath(path))\n"
    "\n"
    "\n"
    "def plain(x):\n"
    "    return json.dumps(x)\n";

struct FfiEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  FfiEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    // torch's stand-in: explain proposes fixes (and walks) only where torch imports.
    venv.install({e2e::data_wheel("torch", "2.9.0", tmp.path + "/wheels"),
                  testsupport::build_wheel({"ffiuser", "1.0", {{"ffiuser/__init__.py", ""}, {"ffiuser/loader.py", kLoader}}},
                                           tmp.path + "/wheels")});
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
};

}  // namespace

TEST_CASE("audit: calls into a module not installed are counted, named first, in --json, and fail --strict",
          "[e2e][audit]") {
  FfiEnv env;
  auto r = env.sp({"audit", "ffiuser.loader:load"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.substr(0, r.out.find('\n')) ==
        "ffiuser.loader:load: no flagged operation found in 1 function walked; 2 calls go into a module not "
        "installed (tvm_ffi) (-v lists them), so this is not proof there is none");

  auto v = env.sp({"-v", "audit", "ffiuser.loader:load"});
  CHECK(v.out.find("    ffiuser/loader.py:11  ffiuser.loader:load  tvm_ffi.load_module  (module tvm_ffi is not "
                   "installed)\n"
                   "    ffiuser/loader.py:12  ffiuser.loader:load  _load  (module tvm_ffi is not installed)\n") !=
        std::string::npos);

  auto strict = env.sp({"audit", "ffiuser.loader:load", "--strict"});
  CHECK(strict.status == 3);

  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "ffiuser.loader:load"}).out);
  CHECK(j["complete"] == false);
  CHECK(j["not_installed"] == nlohmann::json::array({"tvm_ffi"}));
  REQUIRE(j["unresolved"].size() == 2);
  CHECK(j["unresolved"][0]["missing_module"] == "tvm_ffi");
  CHECK(j["unresolved"][0]["call"] == "tvm_ffi.load_module");

  // The standard library and builtins are no missing module: a walk of only those is complete.
  auto plain = env.sp({"audit", "ffiuser.loader:plain", "--strict"});
  CHECK(plain.status == 0);
  CHECK(plain.out.find("every call on the way was resolved") != std::string::npos);
}

TEST_CASE("explain: a walk past a call into a module not installed says so, not that every call was resolved",
          "[e2e][explain]") {
  FfiEnv env;
  std::string log = env.tmp.path + "/break.log";
  testsupport::spit(log,
                    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
                    "  Developer debug context: module: _thread, qualname: allocate_lock, skip reason: <missing reason>\n"
                    "\n"
                    "from user code:\n"
                    "   File \"/home/ml/serve/model.py\", line 8, in forward\n"
                    "    return load(p)\n"
                    "  File \"" + env.venv.site_packages + "/ffiuser/loader.py\", line 9, in load\n"
                    "    spec = json.dumps({'path': path})\n");
  auto r = env.sp({"explain", log});
  INFO(r.out + r.err);
  CHECK(r.out.find("2 calls go into a module not installed (tvm_ffi) (-v lists them), so there may be more") !=
        std::string::npos);
  CHECK(r.out.find("every call on the way was resolved") == std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "explain", log}).out);
  INFO(j.dump(2));
  bool named = false;
  for (auto& b : j["breaks"])
    for (auto& w : b["walks"])
      for (auto& u : w["unresolved"]) named = named || u["missing_module"] == "tvm_ffi";
  CHECK(named);
}

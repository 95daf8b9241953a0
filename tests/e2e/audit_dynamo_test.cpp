// audit through torch's compile entry points and dynamo's markers, on real torch 2.13 (the
// tests' CPU venv): @torch.compiler.disable, assume_constant_result, torch.compile and
// torch._dynamo.disable give back what they wrap (or a wrapper that calls it), so the walk
// goes on into the function they decorate without reading dynamo's own modules. A walk
// through @torch.compiler.disable there once ran out of stack (a Tensor whose __init__ is
// the class Tensor), and, once that was fixed, ran for over ten minutes.
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/torch_env.hpp"

namespace {

const char* kMarked =
    "import subprocess\n"
    "\n"
    "import torch\n"
    "\n"
    "\n"
    "@torch.compiler.disable\n"
    "def probe_arch():\n"
    "    return subprocess.check_output(['nvidia-smi'])\n"
    "\n"
    "\n"
    "@torch.compiler.assume_constant_result\n"
    "def cuda_home():\n"
    "    return subprocess.run(['which', 'nvcc']).stdout\n"
    "\n"
    "\n"
    "@torch.compiler.disable(recursive=False)\n"
    "def build_dir():\n"
    "    return subprocess.getoutput('mktemp -d')\n"
    "\n"
    "\n"
    "@torch.compile(fullgraph=True)\n"
    "def step(x):\n"
    "    probe_arch()\n"
    "    cuda_home()\n"
    "    build_dir()\n"
    "    return x + 1\n";

// torch._dynamo.disable: reading a name of the package runs its __init__, which imports
// most of dynamo (Python does the same); the marker still gives back what it wraps.
const char* kLegacy =
    "import subprocess\n"
    "\n"
    "import torch._dynamo\n"
    "\n"
    "\n"
    "@torch._dynamo.disable\n"
    "def load_kernel():\n"
    "    return subprocess.call(['ninja'])\n"
    "\n"
    "\n"
    "def run(x):\n"
    "    load_kernel()\n"
    "    return x\n";

// Each chain as "operation: function:line -> function:line".
std::vector<std::string> chains(const std::string& json) {
  std::vector<std::string> out;
  auto doc = nlohmann::json::parse(json);
  for (auto& c : doc["chains"]) {
    std::string line = c["operation"].get<std::string>() + ":";
    for (auto& s : c["steps"])
      line += " " + s["function"].get<std::string>() + ":" + std::to_string(s["line"].get<int>());
    out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("audit walks through torch.compile and dynamo's markers into what they decorate and reads none of dynamo",
          "[e2e][audit][torch]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  venv.install(testsupport::build_wheel({"marked", "1.0", {{"marked/__init__.py", kMarked}, {"marked/legacy.py", kLegacy}}}, tmp.path + "/wheels"));
  auto r = e2e::sp_in(tmp.path, venv.root, {"--json", "audit", "marked:step"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  CHECK(chains(r.out) == std::vector<std::string>{"subprocess.check_output: marked:step:23 marked:probe_arch:8",
                                                  "subprocess.getoutput: marked:step:25 marked:build_dir:18",
                                                  "subprocess.run: marked:step:24 marked:cuda_home:13"});
  // torch and torch.compiler are read (the names they bind); dynamo's 180 modules are not.
  CHECK(nlohmann::json::parse(r.out)["modules"].get<int>() < 100);

  auto legacy = e2e::sp_in(tmp.path, venv.root, {"--json", "audit", "marked.legacy:run"});
  INFO(legacy.out + legacy.err);
  REQUIRE(legacy.status == 0);
  CHECK(chains(legacy.out) == std::vector<std::string>{"subprocess.call: marked.legacy:run:12 marked.legacy:load_kernel:8"});
}

// Issue 37: how explain --run's search decides, asserted on what it prints: hints checked
// before any run, each frame's verdict (-v), a run that fails another way rejected with
// its exception, the runs' bound and what it left untried, and the fixes kept where a
// later break has no fix. Real dynamo (torch 2.13, CPU).
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "corpus_env.hpp"

using corpus::CorpusEnv;
using corpus::shape;

TEST_CASE("explain --run checks a hint's body first: on a CPU-only torch it raises, so it is never run",
          "[e2e][explain][torch]") {
  CorpusEnv env(shape("nvccversion"));
  auto r = env.sp({"-v", "explain", "--run", "python repro.py"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("not run: hint cuda-version-from-torch (a traceable body) for nvccversion:get_cuda_version: its "
                   "new body raises here: AttributeError: 'NoneType' object has no attribute 'split'\n") !=
        std::string::npos);
  CHECK(r.out.find("not run: disable on any frame: under fullgraph=True the call of a disabled function is itself "
                   "a break\n") != std::string::npos);
  // Each frame's verdict, innermost first, for both kinds.
  CHECK(r.out.find("  nvccversion:get_cuda_version (nvccversion/__init__.py:15): no: returns a Version object "
                   "(annotated -> Version), no constant dynamo can hold: its caller is the place\n"
                   "    register-custom-op: no: returns a Version object (annotated -> Version): no tensor\n"
                   "  nvccversion:is_cuda_version_at_least (nvccversion/__init__.py:22): candidate: 1 call in "
                   "fp4_quantize (nvccversion/__init__.py:26) passes only constants; returns a bool "
                   "(get_cuda_version() >= Version(v))\n") != std::string::npos);
  CHECK(r.err.find("run 2: + assume_constant_result on nvccversion:is_cuda_version_at_least: exit 0, graphs 1, "
                   "graph breaks 0, ") != std::string::npos);
  CHECK(r.err.find("run 3") == std::string::npos);
}

TEST_CASE("explain --run rejects a run that fails another way, naming the exception, and learns from it",
          "[e2e][explain][torch]") {
  CorpusEnv env(shape("jitloader"));
  auto r = env.sp({"--json", "explain", "--run", "python repro.py"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["runs"].size() == 3);
  CHECK(j["runs"][1]["kept"] == false);
  CHECK(j["runs"][1]["counts"]["failure"] ==
        "RuntimeError: Unable to cast (tensor([2., 2., 2., 2.]), tensor([4., 4., 4., 4.])) to Tensor");
  CHECK(j["runs"][1]["verdict"] == "the run failed another way (exit 1): RuntimeError: Unable to cast (tensor([2., 2., "
                                   "2., 2.]), tensor([4., 4., 4., 4.])) to Tensor");
  CHECK(j["runs"][2]["kept"] == true);
  CHECK(j["recipe"].get<std::string>().find("    register-custom-op: |\n"
                                            "      return torch.empty_like(k), torch.empty_like(v)\n") !=
        std::string::npos);
}

TEST_CASE("explain --run stops at --max-runs and lists what it left untried", "[e2e][explain][torch]") {
  CorpusEnv env(shape("scalefile"));
  auto r = env.sp({"explain", "--run", "python repro.py", "--max-runs", "1"});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find("1 runs; stopped: --max-runs 1 reached\n") != std::string::npos);
  CHECK(r.out.find("left untried (--max-runs 1 was spent; raise it to try them):\n"
                   "  assume_constant_result on scalefile:_capability\n"
                   "  register-custom-op on scalefile:quantize_kv\n") != std::string::npos);
  CHECK(r.out.find("no fix proven: nothing to write") != std::string::npos);
  auto bad = env.sp({"explain", "--run", "python repro.py", "--jobs", "0"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--jobs must be at least 1") != std::string::npos);
}

TEST_CASE("explain --run keeps the fixes that got it further when the next break has no fix, and says why",
          "[e2e][explain][torch]") {
  // A probe (fixable) on the way into a method that times itself (no fix under
  // fullgraph=True): nothing else to try before the probe's fix, so it stands.
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  testsupport::spit(venv.site_packages + "/halfway/__init__.py", R"(import os
import time


def _probe():
    return os.path.isdir("/proc")


class Runner:
    def forward(self, x):
        if _probe():
            self.started = time.perf_counter()
        return x * 2


RUNNER = Runner()
)");
  testsupport::spit(tmp.path + "/app/repro.py", "import torch\n\nimport halfway\n\nf = torch.compile(lambda x: "
                                                "halfway.RUNNER.forward(x), backend=\"eager\", fullgraph=True)\n"
                                                "print(f(torch.ones(4)).tolist())\n");
  auto r = e2e::sp_in(tmp.path + "/app", venv.root, {"--json", "explain", "--run", "python repro.py"});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["kept"].size() == 1);
  CHECK(j["kept"][0]["describe"] == "assume_constant_result on halfway:_probe");
  CHECK(j["undone"].empty());
  CHECK(j["stop"] == "no candidate left that helps");
  CHECK(j["runs"].size() == 2);
  // Why the method is no candidate, for either kind.
  const auto& frames = j["runs"][1]["frames"];
  REQUIRE(frames.size() == 1);
  CHECK(frames[0]["function"] == "halfway:Runner.forward");
  // Called on a module-level object, but with a tensor.
  CHECK(frames[0]["why"] == "halfway.RUNNER.forward(...) at line 5 passes `x`, no constant");
  CHECK(frames[0]["custom_op_why"] == "not a module-level function");
  // fullgraph=True still fails: no recipe, and that said plainly, with the blunt fix.
  CHECK(j["recipe"].is_null());
  CHECK(j["no_fix"] ==
        "no fix keeps fullgraph=True: the fix kept got past 1 break, but dynamo still stops at time.perf_counter at "
        "halfway/__init__.py:14; the blunt one is disable on halfway:Runner.forward (fullgraph=True still fails there: "
        "the call of a disabled function is a break)");
  auto text = e2e::sp_in(tmp.path + "/app", venv.root, {"explain", "--run", "python repro.py"});
  CHECK(text.status == 3);
  CHECK(text.out.find("\n" + j["no_fix"].get<std::string>() + "; nothing written\n") != std::string::npos);
  CHECK(text.out.find("fix:") == std::string::npos);
  CHECK(text.out.find("recipe (--recipe FILE writes it") == std::string::npos);
}

TEST_CASE("explain --run tries the config knob dynamo's own hint names, and says it is a line of the user's code",
          "[e2e][explain][torch]") {
  // A print in a method of tensors: no constant, no custom op (a method); dynamo's hint
  // names reorderable_logging_functions, which the hook sets for the run.
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  testsupport::spit(venv.site_packages + "/absmax/__init__.py", R"(class Scaler:
    def __call__(self, x):
        print("absmax: scaling")
        return x / x.abs().max().clamp(min=1e-6)


SCALE = Scaler()
)");
  testsupport::spit(tmp.path + "/app/repro.py", "import torch\n\nimport absmax\n\nf = torch.compile(lambda x: "
                                                "absmax.SCALE(x) * 2, backend=\"eager\", fullgraph=True)\n"
                                                "print(f(torch.arange(4.0)).tolist())\n");
  std::string recipe = tmp.path + "/proven.yaml";
  auto r = e2e::sp_in(tmp.path + "/app", venv.root, {"explain", "--run", "python repro.py", "--recipe", recipe});
  INFO(r.out + r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("run 2: + dynamo config `torch._dynamo.config.reorderable_logging_functions.add(print)` (a line in "
                   "your code, not a recipe edit): exit 0, graphs 1, graph breaks 0, ") != std::string::npos);
  CHECK(r.out.find("checked: compiled equals eager on 1 call (1 against the unpatched program's outputs, 1 against the "
                   "patched code run eagerly)\n"
                   "add to your code, before torch.compile (no recipe writes it):\n"
                   "  torch._dynamo.config.reorderable_logging_functions.add(print)\n") != std::string::npos);
  CHECK(r.out.find("no recipe: what was proven is a line of your code\n") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(recipe));
}

TEST_CASE("explain --run rejects a fix that compiles but computes other numbers, the difference named",
          "[e2e][explain][torch]") {
  // A hint whose body assumes the untuned scale: it compiles, but the package's tuned
  // scale file says 3.0, so compiled differs from the unpatched program's eager output.
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  testsupport::spit(venv.site_packages + "/tunedscale/__init__.py", R"(import os

_FILE = os.path.join(os.path.dirname(__file__), "scale.txt")


def scale_factor() -> float:
    if os.path.exists(_FILE):
        with open(_FILE) as f:
            return float(f.read())
    return 1.0


def apply(x):
    return x * scale_factor()
)");
  testsupport::spit(venv.site_packages + "/tunedscale/scale.txt", "3.0\n");
  testsupport::spit(tmp.path + "/hints.yaml", R"(hints:
  - id: untuned-scale
    calls: os.path.exists
    holds: [_FILE]
    replace-body: |
      return 1.0
    why: the untuned scale
)");
  testsupport::spit(tmp.path + "/app/repro.py", "import torch\n\nimport tunedscale\n\nf = torch.compile(lambda x: "
                                                "tunedscale.apply(x) + 1, backend=\"eager\", fullgraph=True)\n"
                                                "print(f(torch.ones(4)).tolist())\n");
  auto r = e2e::sp_in(tmp.path + "/app", venv.root,
                      {"--json", "explain", "--run", "python repro.py", "--hints", tmp.path + "/hints.yaml"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["runs"].size() == 3);
  const auto& hint = j["runs"][1];
  CHECK(hint["tried"] == "hint untuned-scale (a traceable body) for tunedscale:scale_factor");
  CHECK(hint["kept"] == false);
  CHECK(hint["counts"]["compiled"] == true);
  CHECK(hint["verdict"] ==
        "compiled differs from eager: call 1: compiled output: max abs difference 2 (sum 8 where eager gives 16, 4 of 4 "
        "elements differ, dtype torch.float32) (against the unpatched program)");
  CHECK(j["runs"][0]["counts"]["checked"]["recorded"] == 1);
  CHECK(j["runs"][2]["tried"] == "assume_constant_result on tunedscale:scale_factor");
  CHECK(j["runs"][2]["kept"] == true);
  CHECK(j["runs"][2]["counts"]["checked"]["mismatch"].is_null());
  CHECK(j["checked"] == "compiled equals eager on 1 call (1 against the unpatched program's outputs, 1 against the "
                        "patched code run eagerly)");
}

TEST_CASE("explain --run: a torch function dynamo skips, called from the user's code, is tried in torch itself, and a "
          "command that still fails exits 3",
          "[e2e][explain][torch]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  testsupport::spit(tmp.path + "/app/repro.py", R"(import torch
from torch.utils.cpp_extension import is_ninja_available


def f(x):
    if is_ninja_available():
        return x * 2
    return x + 1


print(torch.compile(f, backend="eager", fullgraph=True)(torch.ones(2)))
)");
  auto before = e2e::tree_state(venv.root);
  auto r = e2e::sp_in(tmp.path + "/app", venv.root, {"--json", "explain", "--run", "python repro.py"});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][1]["tried"] == "assume_constant_result on torch.utils.cpp_extension:is_ninja_available");
  // The decorator's own line moves the break a line down: still the same break.
  CHECK(j["runs"][1]["verdict"].get<std::string>().rfind("no better: ", 0) == 0);
  CHECK(j["recipe"].is_null());
  CHECK(j["no_fix"].get<std::string>().rfind("no fix keeps fullgraph=True; the blunt one is disable on "
                                             "torch.utils.cpp_extension:is_ninja_available",
                                             0) == 0);
  CHECK(e2e::tree_state(venv.root) == before);
}

TEST_CASE("explain --run makes a library's stubbed custom-op seam real: another library's names and forms, applied",
          "[e2e][explain][torch]") {
  // Not the corpus's FlashInfer shape: the factories are nested identities with no function
  // parameter (`custom_op`, and a fake registrar named after torch's old `impl_abstract`),
  // the fake is `_`, and the op takes a lock dynamo cannot trace in its own body, so no
  // frame fits assume_constant_result and the seam comes before a custom op of its own.
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  testsupport::spit(venv.site_packages + "/kernlib/_compat.py", R"(def custom_op(name, *, mutates_args=(), device_types=None):
    # registering costs a dispatch per call: the library keeps plain functions
    def wrap(fn):
        return fn

    return wrap


def impl_abstract(name):
    def wrap(fn):
        return fn

    return wrap
)");
  testsupport::spit(venv.site_packages + "/kernlib/__init__.py", R"(import threading

import torch

from ._compat import custom_op, impl_abstract

_BUILD = threading.Lock()


@custom_op("kernlib::gelu_and_mul", mutates_args=("out",))
def _gelu_and_mul(out: torch.Tensor, x: torch.Tensor) -> None:
    with _BUILD:  # the kernel's JIT build
        d = x.shape[-1] // 2
    out.copy_(torch.nn.functional.gelu(x[..., :d]) * x[..., d:])


@impl_abstract("kernlib::gelu_and_mul")
def _(out: torch.Tensor, x: torch.Tensor) -> None:
    return None


def gelu_and_mul(x: torch.Tensor) -> torch.Tensor:
    out = x.new_empty(x.shape[:-1] + (x.shape[-1] // 2,))
    _gelu_and_mul(out, x)
    return out
)");
  testsupport::spit(tmp.path + "/app/repro.py", R"(import sys

import torch

import kernlib

x = torch.randn(3, 8)
got = torch.compile(lambda t: kernlib.gelu_and_mul(t) * 2, backend="eager", fullgraph=True)(x)
want = kernlib.gelu_and_mul(x.clone()) * 2
print(got.sum().item(), want.sum().item())
sys.exit(0 if torch.equal(got, want) else 1)
)");
  std::string app = tmp.path + "/app", recipe = tmp.path + "/seam.yaml";
  auto r = e2e::sp_in(app, venv.root, {"--json", "explain", "--run", "python repro.py", "--recipe", recipe});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["kept"].size() == 1);
  CHECK(j["kept"][0]["describe"] == "custom-op seam kernlib._compat:custom_op made real");
  REQUIRE(j["kept"][0]["more"].size() == 1);
  CHECK(j["kept"][0]["more"][0]["function"] == "impl_abstract");
  CHECK(j["kept"][0]["more"][0]["occurrence"] == 0);
  CHECK(j["runs"].size() == 2);
  CHECK(j["runs"][1]["counts"]["checked"]["vs_record"] == 1);
  CHECK(j["runs"][1]["counts"]["checked"]["mismatch"].is_null());
  bool said = false;
  for (auto& f : j["runs"][0]["frames"])
    if (f["function"] == "kernlib:_gelu_and_mul")
      said = f["seam_why"] == "decorated by custom_op(\"kernlib::gelu_and_mul\"), which kernlib._compat defines as an "
                              "identity: the seam made real is a candidate (its fake: _, through impl_abstract)";
  CHECK(said);
  // No parameter the function comes in: the factory gives the registering decorator back.
  std::string text = testsupport::slurp(recipe);
  CHECK(text.find("          return torch.library.custom_op(name, function, mutates_args=mutates, "
                  "device_types=device_types)\n") != std::string::npos);
  CHECK(text.find("      return register\n") != std::string::npos);
  CHECK(text.find("          torch.library.register_fake(name, function)\n") != std::string::npos);
  // Applied for real, the repro compiles and gives eager's numbers.
  auto applied = e2e::sp_in(app, venv.root, {"apply", recipe});
  INFO(applied.err);
  REQUIRE(applied.status == 0);
  auto plain = sitepatch::util::run({"sh", "-c", "cd \"$0\" && exec \"$1\" repro.py", app, venv.python});
  INFO(plain.out + plain.err);
  CHECK(plain.status == 0);
}

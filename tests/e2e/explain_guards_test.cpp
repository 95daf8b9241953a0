// Issue 51 item 3: what explain --run calls a constant to dynamo is asked of the
// environment's own dynamo (rules --calibrate shows the probe), not assumed: a probe kept
// per torch version decides whether a tensor's metadata may be assume_constant_result's
// argument, and a size held only while it stays says so in the fix's cost. Real dynamo
// (torch 2.13, CPU).
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/torch_env.hpp"

namespace {

// A block size per dtype, read from the package's file and cached: called with x.dtype,
// and, for the wide path, with the row count.
const char* kLib = R"(import functools
import json
import os

_FILE = os.path.join(os.path.dirname(__file__), "blocks.json")


@functools.lru_cache(maxsize=None)
def block_for(dtype_name, rows=0):
    with open(_FILE) as f:
        table = json.load(f)
    return table.get(dtype_name, 8) + (1 if rows > 64 else 0)


def scaled(x):
    return x * block_for(str(x.dtype))


def scaled_rows(x):
    return x * block_for(str(x.dtype), x.shape[0])
)";

const char* kRepro = R"(import sys
import torch
import blocks

fn = blocks.scaled_rows if "--rows" in sys.argv else blocks.scaled
got = torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(4, 2))
print(got.sum().item(), fn(torch.ones(4, 2)).sum().item())
)";

struct GuardEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string app, cache;
  GuardEnv() : venv(testsupport::torch_venv(tmp.path + "/venv")), app(tmp.path + "/app"), cache(tmp.path + "/cache") {
    testsupport::spit(venv.site_packages + "/blocks/__init__.py", kLib);
    testsupport::spit(venv.site_packages + "/blocks/blocks.json", "{\"torch.float32\": 4}\n");
    testsupport::spit(app + "/repro.py", kRepro);
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"/usr/bin/env", "NO_COLOR=1", "XDG_CACHE_HOME=" + cache, "sh", "-c",
                                     "cd \"$0\" && exec \"$@\"", app, SITEPATCH_BIN, "--venv", venv.root};
    argv.insert(argv.end(), args.begin(), args.end());
    return sitepatch::util::run(argv);
  }
  // The one probe kept in the cache.
  std::string kept_file() const {
    for (auto& e : std::filesystem::directory_iterator(cache + "/sitepatch/calibration"))
      if (e.path().filename().string().rfind("guards-", 0) == 0) return e.path().string();
    return "";
  }
};

}  // namespace

TEST_CASE("rules --calibrate asks the environment's dynamo what it holds as a constant for assume_constant_result",
          "[e2e][explain][torch]") {
  GuardEnv env;
  auto r = env.sp({"--json", "rules", "--calibrate"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  // The document, checked against its published schema as a script's author would.
  auto valid = sitepatch::util::run({"/usr/bin/python3", std::string(SITEPATCH_SOURCE_DIR) + "/tests/support/validate_schema.py",
                                     std::string(SITEPATCH_SOURCE_DIR) + "/docs/schema/rules.json", "-"},
                                    r.out);
  CHECK(valid.out == "");
  // torch 2.13's dynamo, as measured: a tensor's device, dtype and rank are held; a size
  // only while it stays (a call with another size makes it dynamic and the fix fails).
  REQUIRE(!env.kept_file().empty());
  auto c = nlohmann::json::parse(r.out)["constants"];
  CHECK(c == nlohmann::json::parse(testsupport::slurp(env.kept_file()))["guards"]);
  for (const char* held : {"device", "device.type", "dtype", "is_cuda", "ndim", "dim()", "method of a module-level object"}) {
    INFO(held);
    CHECK(c[held]["state"] == "held");
  }
  for (const char* sized : {"shape[i]", "size()", "shape unpacked"}) {
    INFO(sized);
    CHECK(c[sized]["state"] == "held_static");
    CHECK(c[sized]["why"] == "Unsupported: assume_constant_result argument conversion failed");
  }
}

TEST_CASE("explain --run offers assume_constant_result on a tensor's metadata only as this torch's probe allows",
          "[e2e][explain][torch]") {
  GuardEnv env;
  // Nothing kept: the search probes once, keeps the answer, and the fix it keeps says so.
  auto first = env.sp({"-v", "explain", "--run", "python repro.py"});
  INFO(first.out + first.err);
  REQUIRE(first.status == 0);
  CHECK(first.out.find("  blocks:block_for (blocks/__init__.py:10): candidate: 1 call in scaled (blocks/__init__.py:16) "
                       "passes only constants (`str(x.dtype)`: a tensor's metadata, which dynamo guards and holds as a "
                       "constant; probed in torch 2.13.0+cpu here)") != std::string::npos);
  CHECK(first.out.find("1 fix proven:\n  assume_constant_result on blocks:block_for\n") != std::string::npos);
  std::string file = env.kept_file();
  REQUIRE(!file.empty());

  // A size: held while it stays, and the recipe's cost says what a changed size does.
  auto rows = env.sp({"explain", "--run", "python repro.py --rows", "--recipe", "-"});
  INFO(rows.out + rows.err);
  REQUIRE(rows.status == 0);
  CHECK(rows.out.find("`x.shape[0]` is held while the tensors keep their sizes: a call with other sizes makes a size "
                      "dynamic and fails under fullgraph=True (torch 2.13.0+cpu here: Unsupported: "
                      "assume_constant_result argument conversion failed); compile with dynamic=False, or "
                      "torch._dynamo.mark_static on those dimensions, to recompile per size instead") !=
        std::string::npos);

  // A torch whose dynamo does not hold a dtype (as the kept probe now says): no such candidate.
  auto kept = nlohmann::json::parse(testsupport::slurp(file));
  kept["guards"]["dtype"] = {{"state", "breaks"}, {"why", "Unsupported: planted"}};
  testsupport::spit(file, kept.dump());
  auto refused = env.sp({"--json", "explain", "--run", "python repro.py", "--max-runs", "1"});
  INFO(refused.out + refused.err);
  auto j = nlohmann::json::parse(refused.out);
  bool seen = false;
  for (auto& f : j["runs"][0]["frames"])
    if (f["function"] == "blocks:block_for") {
      seen = true;
      CHECK(f["why"] == "block_for(...) at line 16 passes `str(x.dtype)`: torch 2.13.0+cpu's dynamo does not "
                        "hold a tensor's dtype as a constant for assume_constant_result (breaks: Unsupported: planted)");
    }
  CHECK(seen);
}

namespace {

// Frames checked by CRC-32: the C one where zlib is built, the package's own pure-Python
// one where it is not; the tag comes from the caller, so its result is no constant.
const char* kFramesLib = R"(import torch

try:
    from zlib import crc32 as _crc
except ImportError:  # a Python built without zlib
    def _crc(data, value=0):
        crc = value ^ 0xFFFFFFFF
        for b in data:
            crc ^= b
            for _ in range(8):
                crc = (crc >> 1) ^ (0xEDB88320 & -(crc & 1))
        return crc ^ 0xFFFFFFFF


def tag_seed(tag):
    return _crc(tag.encode()) % 251


def stamp(x, tag):
    return x * 0.5 + tag_seed(tag)
)";

// The same through a module of its own: `from ._purehash import fnv as digest` beside a C import.
const char* kPureMod = R"(def fnv(data, value=0):
    crc = value ^ 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 & -(crc & 1))
    return crc ^ 0xFFFFFFFF
)";
const char* kSplitLib = R"(try:
    from binascii import crc32 as digest
except ImportError:
    from ._purehash import fnv as digest


class Framer:
    def __init__(self, tag):
        self.tag = tag

    def mark(self, x):
        return x + digest(self.tag) % 13
)";

}  // namespace

TEST_CASE("explain --run gives dynamo the library's own pure-Python definition of a C function it stops at",
          "[e2e][explain][torch]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::torch_venv(tmp.path + "/venv");
  testsupport::spit(venv.site_packages + "/framecheck/__init__.py", kFramesLib);
  testsupport::spit(venv.site_packages + "/splitcrc/__init__.py", kSplitLib);
  testsupport::spit(venv.site_packages + "/splitcrc/_purehash.py", kPureMod);
  testsupport::spit(tmp.path + "/app/one.py",
                    "import sys\nimport torch\nimport framecheck\n\n\ndef step(x, tag):\n"
                    "    return framecheck.stamp(x, tag)\n\n\n"
                    "got = torch.compile(step, backend=\"eager\", fullgraph=True)(torch.ones(3), sys.argv[1])\n"
                    "print(got.tolist())\n");
  testsupport::spit(tmp.path + "/app/two.py",
                    "import torch\nimport splitcrc\n\nF = splitcrc.Framer(b'frame-v2')\n"
                    "got = torch.compile(F.mark, backend=\"eager\", fullgraph=True)(torch.ones(2))\n"
                    "print(got.tolist())\n");
  std::string recipe = tmp.path + "/proven.yaml";
  auto r = e2e::sp_in(tmp.path + "/app", venv.root,
                      {"--json", "explain", "--run", "python one.py frame-v2", "--recipe", recipe});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["kept"].size() == 1);
  CHECK(j["kept"][0]["describe"] == "substitute_in_graph for zlib.crc32 (framecheck's pure-Python _crc)");
  CHECK(j["checked"].get<std::string>().find("compiled equals eager on 1 call") != std::string::npos);
  std::string text = testsupport::slurp(recipe);
  CHECK(text.find("  - module: framecheck\n"
                  "    function: tag_seed\n"
                  "    insert-after: |\n"
                  "      try:  # sitepatch: dynamo traces the library's pure-Python _crc where the C one is called; "
                  "eager runs still call C\n"
                  "          @torch.compiler.substitute_in_graph(_crc, skip_signature_check=True)\n"
                  "          def _sitepatch_traceable__crc(data, value=0):\n"
                  "              crc = value ^ 0xFFFFFFFF\n") != std::string::npos);
  // Applied, the compiled step computes what eager does, and the C one still runs eagerly.
  REQUIRE(e2e::sp_in(tmp.path + "/app", venv.root, {"apply", recipe}).status == 0);
  auto run = sitepatch::util::run({venv.python, "-c",
                                   "import torch, zlib, framecheck\n"
                                   "assert framecheck._crc is zlib.crc32\n"
                                   "f = torch.compile(framecheck.stamp, backend='eager', fullgraph=True)\n"
                                   "print(f(torch.ones(2), 'abc').tolist(), framecheck.stamp(torch.ones(2), 'abc').tolist())\n"});
  INFO(run.err);
  CHECK(run.out == "[12.5, 12.5] [12.5, 12.5]\n");

  // The pure-Python one in a module of its own: imported under the name, then substituted.
  auto two = e2e::sp_in(tmp.path + "/app", venv.root, {"--json", "explain", "--run", "python two.py"});
  INFO(two.out + two.err);
  REQUIRE(two.status == 0);
  auto k = nlohmann::json::parse(two.out);
  REQUIRE(k["kept"].size() == 1);
  CHECK(k["kept"][0]["describe"] == "substitute_in_graph for binascii.crc32 (splitcrc._purehash:fnv)");
  CHECK(k["kept"][0]["code"] ==
        "try:  # sitepatch: dynamo traces the library's pure-Python digest where the C one is called; eager runs still "
        "call C\n"
        "    from splitcrc._purehash import fnv as _sitepatch_traceable_digest\n"
        "    torch.compiler.substitute_in_graph(digest, skip_signature_check=True)(_sitepatch_traceable_digest)\n"
        "except (ImportError, AttributeError, TypeError):  # no pure module, or this torch cannot substitute\n"
        "    pass\n");
  CHECK(k["kept"][0]["function"] == "Framer");
}

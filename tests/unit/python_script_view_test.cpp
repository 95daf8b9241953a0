// A script as its functions see it: the main part blanked line for line, what the
// functions read kept byte for byte.
#include <catch2/catch.hpp>

#include "sitepatch/python/script_view.hpp"
#include "sitepatch/util/strings.hpp"

using namespace sitepatch::python;

namespace {

const char* kScript = R"(import sys

import torch

import mylib

SCALE = 2.0
unused = torch.ones(3)
calls = 0
REGISTRY = {}
HANDLERS = []


def fn(x):
    global calls
    return REGISTRY["op"](x) * SCALE + HANDLERS[0](x)


class Model(torch.nn.Module):
    def forward(self, x):
        return fn(x)


REGISTRY["op"] = mylib.op
HANDLERS.append(mylib.handle)
unused.add_(1)
torch.manual_seed(0)
x = torch.randn(4, 8)
got = torch.compile(fn, fullgraph=True)(x)
if __name__ == "__main__":
    print(got.sum())
try:
    import extra_lib
except ImportError:
    extra_lib = None
for _ in range(3):
    SCALE += 1.0
)";

}  // namespace

TEST_CASE("functions_view keeps what the script's functions read and blanks its main part, line for line") {
  std::string view = functions_view(kScript);
  auto before = sitepatch::util::split(kScript, '\n');
  auto after = sitepatch::util::split(view, '\n');
  REQUIRE(before.size() == after.size());
  std::string kept;
  for (size_t i = 0; i < after.size(); ++i) {
    std::string line = sitepatch::util::trim(after[i]);
    if (line.empty()) continue;
    CHECK(after[i] == before[i]);  // a line kept is kept byte for byte
    kept += line + "\n";
  }
  CHECK(kept ==
        "import sys\n"
        "import torch\n"
        "import mylib\n"
        "SCALE = 2.0\n"
        "calls = 0\n"
        "REGISTRY = {}\n"
        "HANDLERS = []\n"
        "def fn(x):\n"
        "global calls\n"
        "return REGISTRY[\"op\"](x) * SCALE + HANDLERS[0](x)\n"
        "class Model(torch.nn.Module):\n"
        "def forward(self, x):\n"
        "return fn(x)\n"
        "REGISTRY[\"op\"] = mylib.op\n"
        "HANDLERS.append(mylib.handle)\n"
        "try:\n"
        "import extra_lib\n"
        "except ImportError:\n"
        "extra_lib = None\n"
        "for _ in range(3):\n"
        "SCALE += 1.0\n");
}

TEST_CASE("functions_view leaves a script it cannot read whole as it is") {
  std::string star = "from mylib import *\n\nx = op(1)\n\ndef f():\n    return op\n";
  CHECK(functions_view(star) == star);
  std::string broken = "def f(:\n    return 1\nprint(f())\n";
  CHECK(functions_view(broken) == broken);
}

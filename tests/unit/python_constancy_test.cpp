// What the source says about a call's arguments and a function's result: the facts
// explain --run's assume_constant_result candidates are chosen by.
#include <catch2/catch.hpp>

#include "sitepatch/python/constancy.hpp"

using namespace sitepatch::python;

namespace {

const char* kLib = R"(import functools
import json
import os

import torch

_DIR = os.path.dirname(__file__)
DEFAULT = "default"
BLOCK = (4, 8)
_dirs = []


class Version:
    def __init__(self, text):
        self.parts = tuple(int(p) for p in text.split("."))

    def major(self):
        return self.parts[0]


def get_cuda_version() -> Version:
    return Version("12.8")


def unannotated_version():
    v = Version("12.8")
    return v


def is_at_least(v):
    return get_cuda_version() >= Version(v)


def load_scales(name="default", dtype=torch.float16, where=_DIR):
    with open(os.path.join(_DIR, name)) as f:
        return json.load(f)


def capability():
    return (10, 0)


def build(name):
    return _build(name)


def _build(name):
    return Version(name)


def loader():
    return importlib.import_module("x")


def opaque(x):
    return x.thing()


def caller(x, kind):
    s = load_scales()
    t = load_scales(DEFAULT, torch.bfloat16)
    u = load_scales(kind)
    w = load_scales(x.name, *x.rest)
    f = lambda: load_scales(object())
    return is_at_least("12.8") and is_at_least(BLOCK) and is_at_least(_dirs)


top = load_scales("at-import")
)";

ArgumentFacts::Kind kind_of(const CallFacts& c, const std::string& slot) {
  for (auto& a : c.args)
    if (a.slot == slot) return a.kind;
  FAIL("no argument " << slot);
  return ArgumentFacts::other;
}

}  // namespace

TEST_CASE("constancy: results dynamo can hold, objects, and what the source does not say", "[python][constancy]") {
  auto v = function_facts(kLib, "get_cuda_version");
  REQUIRE(v.found);
  CHECK(v.result.kind == ResultFacts::object);
  CHECK(v.result.why == "returns a Version object (annotated -> Version)");
  auto u = function_facts(kLib, "unannotated_version");
  CHECK(u.result.kind == ResultFacts::object);
  CHECK(u.result.why == "returns a Version object");
  auto at = function_facts(kLib, "is_at_least");
  CHECK(at.result.kind == ResultFacts::holdable);
  CHECK(at.result.why == "returns a bool (get_cuda_version() >= Version(v))");
  CHECK(at.params == std::vector<std::string>{"v"});
  auto scales = function_facts(kLib, "load_scales");
  CHECK(scales.result.kind == ResultFacts::holdable);
  CHECK(scales.result.why == "returns json.load(...)");
  CHECK(scales.default_constant == std::map<std::string, bool>{{"name", true}, {"dtype", true}, {"where", false}});
  CHECK(function_facts(kLib, "capability").result.kind == ResultFacts::holdable);
  auto built = function_facts(kLib, "build");
  CHECK(built.result.kind == ResultFacts::object);
  CHECK(built.result.why == "returns a Version object (through _build)");
  CHECK(function_facts(kLib, "loader").result.why == "returns a module");
  auto opaque = function_facts(kLib, "opaque");
  CHECK(opaque.result.kind == ResultFacts::unknown);
  CHECK(opaque.result.why == "returns x.thing(...), whose type is not known here");
  auto m = function_facts(kLib, "Version.major");
  CHECK(m.found);
  CHECK(m.method);
  CHECK_FALSE(function_facts(kLib, "nothing").found);
}

TEST_CASE("constancy: each call's arguments, constants, the caller's parameters and the rest",
          "[python][constancy]") {
  // Line 62 is inside caller(): every call of load_scales there, the lambda's left out.
  auto in = calls_in(kLib, 62, "load_scales");
  CHECK(in.caller == "caller");
  CHECK(in.caller_params == std::vector<std::string>{"x", "kind"});
  REQUIRE(in.calls.size() == 4);
  CHECK(in.calls[0].args.empty());
  CHECK(kind_of(in.calls[1], "#0") == ArgumentFacts::constant);  // a module-level constant
  CHECK(kind_of(in.calls[1], "#1") == ArgumentFacts::constant);  // torch.bfloat16
  CHECK(kind_of(in.calls[2], "#0") == ArgumentFacts::parameter);
  CHECK(kind_of(in.calls[3], "#0") == ArgumentFacts::other);
  CHECK(in.calls[3].spread);
  auto checks = calls_in(kLib, 62, "is_at_least");
  REQUIRE(checks.calls.size() == 3);
  CHECK(kind_of(checks.calls[0], "#0") == ArgumentFacts::constant);
  CHECK(kind_of(checks.calls[1], "#0") == ArgumentFacts::constant);  // a tuple of literals, assigned once
  CHECK(kind_of(checks.calls[2], "#0") == ArgumentFacts::other);     // a list the module fills
  // At module level: the calls on that line only.
  auto top = calls_in(kLib, 68, "load_scales");
  CHECK(top.caller == "");
  REQUIRE(top.calls.size() == 1);
  CHECK(kind_of(top.calls[0], "#0") == ArgumentFacts::constant);
}

TEST_CASE("constancy: a tensor's metadata is a constant to dynamo, directly, compared, or through a local",
          "[python][constancy]") {
  const std::string src =
      "def op(x, w):\n"                                            // 1
      "    kind = x.device.type\n"                                 // 2
      "    twice = x.dtype\n"                                      // 3
      "    twice = w.dtype\n"                                      // 4
      "    setting(x.device.type, x.dtype, x.is_cuda, x.ndim)\n"  // 5
      "    setting(kind, x.shape[-1], x.size(0), x.dim())\n"      // 6
      "    setting(x.device.type == 'cuda', str(x.device), not x.is_cuda)\n"  // 7
      "    setting(twice, x.sum(), x.device.type == w, x + 1)\n"  // 8
      "    for i, (a, b) in enumerate(w):\n"
      "        total = a\n"
      "    with open(p) as fh:\n"
      "        pass\n"
      "    if (n := len(w)):\n"
      "        pass\n";
  auto in = calls_in(src, 5, "setting");
  REQUIRE(in.calls.size() == 4);
  for (auto& slot : {"#0", "#1", "#2", "#3"}) {
    INFO(slot);
    CHECK(kind_of(in.calls[0], slot) == ArgumentFacts::guarded);
    CHECK(kind_of(in.calls[1], slot) == ArgumentFacts::guarded);
  }
  CHECK(kind_of(in.calls[2], "#0") == ArgumentFacts::guarded);
  CHECK(kind_of(in.calls[2], "#1") == ArgumentFacts::guarded);
  CHECK(kind_of(in.calls[2], "#2") == ArgumentFacts::guarded);
  // Assigned twice (which one is not known here), a tensor's values, a comparison with a
  // tensor, arithmetic on one: no constant.
  CHECK(kind_of(in.calls[3], "#0") == ArgumentFacts::other);
  CHECK(kind_of(in.calls[3], "#1") == ArgumentFacts::other);
  CHECK(kind_of(in.calls[3], "#2") == ArgumentFacts::other);
  CHECK(kind_of(in.calls[3], "#3") == ArgumentFacts::other);
  CHECK(in.caller_locals == std::vector<std::string>{"a", "b", "fh", "i", "kind", "n", "total", "twice"});
}

TEST_CASE("constancy: names unpacked from a tensor's shape are dimensions dynamo guards", "[python][constancy]") {
  const std::string src =
      "def experts(x, w1):\n"
      "    E, N, _ = w1.shape\n"
      "    M, K = x.size()\n"
      "    a, b = pair(x)\n"
      "    pick(E, N, M, K, a)\n";
  auto in = calls_in(src, 5, "pick");
  REQUIRE(in.calls.size() == 1);
  for (auto& slot : {"#0", "#1", "#2", "#3"}) {
    INFO(slot);
    CHECK(kind_of(in.calls[0], slot) == ArgumentFacts::guarded);
  }
  CHECK(kind_of(in.calls[0], "#4") == ArgumentFacts::other);
}

TEST_CASE("constancy: a guarded argument names the kinds of metadata it rests on, for the probe to answer",
          "[python][constancy]") {
  const std::string src =
      "def op(x, w):\n"
      "    E, N = w.shape\n"
      "    kind = x.device.type\n"
      "    pick(kind, str(x.dtype), x.shape[0], x.size(1), E, x.dtype == w.dtype and x.is_cuda, x.dim())\n";
  auto in = calls_in(src, 4, "pick");
  REQUIRE(in.calls.size() == 1);
  const auto& a = in.calls[0].args;
  REQUIRE(a.size() == 7);
  using V = std::vector<std::string>;
  CHECK(a[0].guards == V{"device.type"});
  CHECK(a[1].guards == V{"dtype"});
  CHECK(a[2].guards == V{"shape[i]"});
  CHECK(a[3].guards == V{"size()"});
  CHECK(a[4].guards == V{"shape unpacked"});
  CHECK(a[5].guards == V{"dtype", "is_cuda"});
  CHECK(a[6].guards == V{"dim()"});
}

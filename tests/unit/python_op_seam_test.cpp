// A library's own custom-op seam as the source shows it: which decorators name a custom op,
// which decorator factories give back what they decorate unchanged, and where an imported
// factory lives.
#include <catch2/catch.hpp>

#include "sitepatch/python/op_seam.hpp"

using namespace sitepatch::python;

namespace {

const char* kUtils = R"(import torch

if torch.__version__ < "2.4":
    def register_custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
        return lambda x: x

    def register_fake_op(name, fn=None):
        return lambda x: x
else:
    def register_custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
        # return torch.library.custom_op(name, fn, mutates_args=mutates_args)
        return lambda x: x

    def register_fake_op(name, fn=None):
        return lambda x: x


def passthrough(name, func=None):
    def wrap(f):
        return f
    return wrap if func is None else func


def real_op(name, fn=None, *, mutates_args):
    return torch.library.custom_op(name, fn, mutates_args=mutates_args)


def logs_then_returns(name):
    print("registering", name)
    return lambda fn: fn


def out_param(x, out):
    return out


def wraps_it(name):
    def deco(f):
        def inner(*a):
            return f(*a)
        return inner
    return deco
)";

const char* kOps = R"(import functools
from typing import Optional

import torch

from .utils import register_custom_op, register_fake_op as fake_op
from ..shared import helpers


@register_custom_op("lib::norm", mutates_args=("out",))
def _norm(out: torch.Tensor, x: torch.Tensor) -> None:
    out.copy_(x)


@fake_op("lib::norm")
def _norm_fake(out: torch.Tensor, x: torch.Tensor) -> None:
    pass


@functools.cache
def get_act_module(name: str):
    @register_custom_op(f"lib::{name}", mutates_args=("out",))
    def _act(out: torch.Tensor, x: torch.Tensor) -> None:
        out.copy_(x)

    @fake_op(f"lib::{name}")
    def _act_fake(out: torch.Tensor, x: torch.Tensor) -> None:
        pass

    return _act


@functools.lru_cache("not an op name")
def plain(x):
    return x
)";

}  // namespace

TEST_CASE("a stubbed registration is an identity factory in each branch that defines it") {
  ModuleSeams s = module_seams(kUtils, "lib.utils", false);
  REQUIRE(s.factories.count("register_custom_op"));
  const SeamFactory& op = s.factories.at("register_custom_op");
  CHECK(op.defs == 2);
  CHECK(op.occurrences == std::vector<int>{1, 2});
  CHECK(op.params == std::vector<std::string>{"name", "fn", "mutates_args", "device_types", "schema"});
  CHECK(s.factories.at("register_fake_op").occurrences == std::vector<int>{1, 2});
  // A nested identity returned, or the function given directly: the parameter it comes in.
  REQUIRE(s.factories.count("passthrough"));
  CHECK(s.factories.at("passthrough").function_param == "func");
  // Something else done first still gives the function back unchanged.
  CHECK(s.factories.count("logs_then_returns"));
  // A real registration, and a wrapper that returns a new function, are no stubs.
  CHECK_FALSE(s.factories.count("real_op"));
  CHECK_FALSE(s.factories.count("wraps_it"));
  // A function that returns a parameter of its own gives no decorator: no factory.
  CHECK_FALSE(s.factories.count("out_param"));
}

TEST_CASE("decorators naming a custom op, nested ones and f-strings included, and where each factory comes from") {
  ModuleSeams s = module_seams(kOps, "lib.sub.ops", false);
  REQUIRE(s.ops.size() == 4);
  CHECK(s.ops[0].callee == "register_custom_op");
  CHECK(s.ops[0].op == "\"lib::norm\"");
  CHECK(s.ops[0].function == "_norm");
  CHECK(s.ops[1].callee == "fake_op");
  CHECK(s.ops[1].function == "_norm_fake");
  CHECK(s.ops[2].op == "f\"lib::{name}\"");
  CHECK(s.ops[2].function == "_act");
  // A line inside a decorated function finds its decorator; the innermost one wins.
  REQUIRE(s.op_at(12));
  CHECK(s.op_at(12)->function == "_norm");
  REQUIRE(s.op_at(24));
  CHECK(s.op_at(24)->function == "_act");
  CHECK(s.op_at(35) == nullptr);  // a string argument with no "::" names no op
  // Relative imports made absolute, aliases kept.
  CHECK(s.from_imports.at("register_custom_op") == "lib.sub.utils:register_custom_op");
  CHECK(s.from_imports.at("fake_op") == "lib.sub.utils:register_fake_op");
  CHECK(s.from_imports.at("helpers") == "lib.shared:helpers");
  CHECK(s.factories.empty());
  // From a package's __init__.py, one dot is the package itself.
  ModuleSeams p = module_seams(kOps, "lib.sub.ops", true);
  CHECK(p.from_imports.at("register_custom_op") == "lib.sub.ops.utils:register_custom_op");
  CHECK(p.from_imports.at("helpers") == "lib.sub.shared:helpers");
  // Above the top-level package: nothing.
  CHECK(module_seams(kOps, "ops", false).from_imports.count("helpers") == 0);
}

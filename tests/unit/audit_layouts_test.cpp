// Name resolution on the import layouts of real packages (tests/data/packages/
// rp-layouts-1.0): a package binding its own subpackage in __init__, `import a.b as c`,
// `from . import x as y`, imports in try/except and if TYPE_CHECKING (every branch),
// a module __getattr__, and a name that resolves in a circle.
#include <catch2/catch.hpp>

#include <algorithm>

#include "audit_support.hpp"
#include "sitepatch/audit/scan.hpp"

using namespace auditsupport;

namespace {

CallGraph from(MemorySource& src, const std::string& module, const std::string& function) {
  return walk(src, dynamo(), {module, function, 0});
}

}  // namespace

TEST_CASE("a package whose __init__ binds its own subpackage resolves below it", "[audit]") {
  // rp/__init__.py: `from . import jit`; the walk used to restart from rp until its
  // depth limit and call it an import loop.
  MemorySource src("rp-layouts-1.0");
  auto g = from(src, "rp.jit.fp4", "gen");
  CHECK(chains(g) == std::vector<std::string>{"rp.jit.fp4:gen:5 > rp.jit.cpp_ext:ver:5 > subprocess.check_output"});
  CHECK(unresolved(g) == std::vector<std::string>{});
}

TEST_CASE("import a.b as c, from . import x as y, from .x import y", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  CHECK(chains(from(src, "rp.layouts", "via_import_as")) ==
        std::vector<std::string>{"rp.layouts:via_import_as:22 > rp.tools.shell:run:5 > os.system"});
  CHECK(chains(from(src, "rp.layouts", "via_from_import_as")) ==
        std::vector<std::string>{
            "rp.layouts:via_from_import_as:26 > rp.jit.cpp_ext:ver:5 > subprocess.check_output"});
  CHECK(chains(from(src, "rp.layouts", "via_from_import")) ==
        std::vector<std::string>{
            "rp.layouts:via_from_import:30 > rp.jit.fp4:gen:5 > rp.jit.cpp_ext:ver:5 > subprocess.check_output"});
}

TEST_CASE("imports in try/except ImportError: every branch is followed and under if TYPE_CHECKING only what runs",
          "[audit]") {
  MemorySource src("rp-layouts-1.0");
  CHECK(chains(from(src, "rp.layouts", "via_try_except")) ==
        std::vector<std::string>{"rp.layouts:via_try_except:34 > rp._fast:compile_kernel:2 > open",
                                 "rp.layouts:via_try_except:34 > rp._slow:compile_kernel:5 > subprocess.run"});
  // The import a type checker reads names what annotations mean; the else arm's runs.
  CHECK(chains(from(src, "rp.layouts", "via_type_checking")) ==
        std::vector<std::string>{"rp.layouts:via_type_checking:38 > rp._runtime:helper:5 > os.path.exists"});
}

TEST_CASE("a name a module __getattr__ provides is reported as a lazy export, and __getattr__ is walked", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  auto g = from(src, "rp.layouts", "via_getattr");
  CHECK(chains(g) == std::vector<std::string>{
                         "rp.layouts:via_getattr:42 > rp.lazy:__getattr__:5 > importlib.import_module"});
  CHECK(unresolved(g) ==
        std::vector<std::string>{"rp/layouts.py:42 rp.layouts:via_getattr lazy.thing (rp.lazy.thing is made at run "
                                 "time by rp.lazy:__getattr__ (a lazy export))"});
}

TEST_CASE("a name a package rebinds to its own submodule's function, a compiled submodule", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  // from .shadow import shadow in rp/shadow/__init__.py: the path rp.shadow.shadow.shadow
  // goes through the submodule rp.shadow.shadow (it used to grow until the depth limit).
  auto g = from(src, "rp.layouts", "via_shadowed_package");
  CHECK(chains(g) == std::vector<std::string>{
                         "rp.layouts:via_shadowed_package:54 > rp.shadow.shadow:shadow:5 > subprocess.call"});
  CHECK(unresolved(g) == std::vector<std::string>{});
  // from rp.ext import _native, where _native has no source (a C extension): outside the
  // environment's sources, not a circle; a call into it is a call out of the program, as
  // one into the standard library is (never followed, never a chain of its own).
  g = from(src, "rp.layouts", "via_compiled_submodule");
  CHECK(g.chains.empty());
  CHECK(unresolved(g) == std::vector<std::string>{});
  // rp/ext/__init__.py: `from ._native import *`: which names it binds is not known.
  g = from(src, "rp.layouts", "via_compiled_star");
  CHECK(g.chains.empty());
  CHECK(unresolved(g) == std::vector<std::string>{"rp/layouts.py:76 rp.layouts:via_compiled_star ext.fast_kernel (made by "
                                                  "the compiled module rp.ext._native (a star import binds it), which "
                                                  "the walk cannot read)"});
  // `xrange = xrange` then `xrange = range` (mpmath's Python 2 shim): the builtin range.
  g = from(src, "rp.layouts", "via_compat_alias");
  CHECK(unresolved(g) == std::vector<std::string>{});
}

TEST_CASE("a name that resolves in a circle is kept as a limit of the tool, never dropped", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  auto g = from(src, "rp.layouts", "via_circle");
  CHECK(g.chains.empty());
  CHECK(unresolved(g) == std::vector<std::string>{"rp/layouts.py:46 rp.layouts:via_circle spin (resolves in a "
                                                  "circle: rp.circle_b.spin -> rp.circle_a.spin) [limit]"});
}

TEST_CASE("flagged means performed: calls, callables passed on, with, not except, isinstance, annotations, constants",
          "[audit]") {
  MemorySource src("rp-layouts-1.0");
  auto g = from(src, "rp.alarms", "everything");
  CHECK(chains(g) == std::vector<std::string>{
                         "rp.alarms:everything:35 > rp.alarms:not_performed:10 > subprocess.check_output",
                         "rp.alarms:everything:36 > rp.alarms:performed:23 > subprocess.run",
                         "rp.alarms:everything:36 > rp.alarms:performed:24 > open",
                         "rp.alarms:everything:36 > rp.alarms:performed:25 > subprocess.Popen",
                         "rp.alarms:everything:37 > rp.alarms:renamed:42 > open",
                     });

  // The scan decides with the same code: the same calls, nothing else.
  auto facts = extract(src.files["rp/alarms.py"], "rp.alarms", false);
  std::vector<std::string> scanned, walked;
  for (auto& f : scan(facts, dynamo())) scanned.push_back(std::to_string(f.line) + " " + f.operation);
  for (auto& c : g.chains) walked.push_back(std::to_string(c.steps.back().line) + " " + c.operation);
  std::sort(walked.begin(), walked.end());
  CHECK(scanned == std::vector<std::string>{"10 subprocess.check_output", "23 subprocess.run", "24 open",
                                            "25 subprocess.Popen", "42 open"});
  CHECK(scanned == walked);

  // `saved_open = open` only renames it: the call through the new name calls open.
  auto r = from(src, "rp.alarms", "renamed");
  CHECK(chains(r) == std::vector<std::string>{"rp.alarms:renamed:42 > open"});
  CHECK(unresolved(r).empty());
}

TEST_CASE("performs() tells an operation from a mention", "[audit]") {
  Ref call{"subprocess.run", 1, 1, Ref::call};
  Ref raised{"subprocess.CalledProcessError", 1, 1, Ref::call, false, true};
  Ref value{"subprocess.run", 1, 1, Ref::value};
  Ref constant{"subprocess.PIPE", 1, 1, Ref::value};
  Ref entered{"mylib.LOCK", 1, 1, Ref::entered};
  CHECK(performs(call, "subprocess.run"));
  CHECK_FALSE(performs(raised, "subprocess.CalledProcessError"));
  CHECK(performs(value, "subprocess.run"));
  CHECK_FALSE(performs(constant, "subprocess.PIPE"));
  CHECK(performs(entered, "mylib.LOCK"));
}

TEST_CASE("methods of inferred values: return annotations, constructors, properties, instances, with", "[audit]") {
  MemorySource src("rp-layouts-1.0");
  const std::string build = "rp.jit.spec:JitSpec.build_and_load:11 > subprocess.run";
  auto walked = [&](const std::string& fn) {
    auto g = from(src, "rp.inferred", fn);
    INFO(fn);
    CHECK(unresolved(g) == std::vector<std::string>{});
    return chains(g);
  };
  using V = std::vector<std::string>;
  // `gen_fp4().build_and_load()`, gen_fp4 annotated `-> JitSpec`.
  CHECK(walked("via_return_annotation") == V{"rp.inferred:via_return_annotation:8 > " + build});
  // `spec = JitSpec(); spec.build_and_load()`.
  CHECK(walked("via_constructor") == V{"rp.inferred:via_constructor:13 > " + build});
  // `-> Optional[JitSpec]` and `-> "JitSpec | None"`.
  CHECK(walked("via_optional") == V{"rp.inferred:via_optional:18 > " + build});
  CHECK(walked("via_union_string") == V{"rp.inferred:via_union_string:23 > " + build});
  // A parameter annotated `spec: JitSpec`.
  CHECK(walked("via_parameter") == V{"rp.inferred:via_parameter:27 > " + build});
  // `self.aot_path.exists()`, aot_path a @property returning Path.
  CHECK(from(src, "rp.inferred", "via_property").functions == 3);  // via_property, is_built, aot_path
  CHECK(walked("via_property") ==
        V{"rp.inferred:via_property:31 > rp.jit.spec:JitSpec.is_built:18 > pathlib.Path.exists"});
  // `registry = Registry()` at module level, `registry.register(...)` elsewhere.
  CHECK(walked("via_module_instance") ==
        V{"rp.inferred:via_module_instance:35 > rp.jit.spec:Registry.register:23 > open"});
  // `with BuildLock():` runs its __enter__.
  CHECK(walked("via_with") == V{"rp.inferred:via_with:39 > rp.jit.spec:BuildLock.__enter__:31 > os.makedirs"});
  // `self.spec = JitSpec()` in __init__, `self.spec.build_and_load()` in a method.
  CHECK(walked("via_self_attribute") ==
        V{"rp.inferred:via_self_attribute:44 > rp.jit.spec:Holder.run:54 > " + build});
  // `backend_modules[backend]().build_and_load()`: a dict of builders annotated alike.
  CHECK(walked("via_dict_of_builders") == V{"rp.inferred:via_dict_of_builders:48 > " + build});
  // Path arithmetic: `(Path(root) / "kernels").exists()`, `cache = Path(root) / "cache"`.
  CHECK(walked("via_path_arithmetic") == V{"rp.inferred:via_path_arithmetic:56 > pathlib.Path.exists"});
  CHECK(walked("via_path_variable") == V{"rp.inferred:via_path_variable:61 > pathlib.Path.mkdir"});
  // A list of builders returning different classes: the method of each.
  CHECK(walked("via_mixed_builders") ==
        V{"rp.inferred:via_mixed_builders:67 > " + build,
          "rp.inferred:via_mixed_builders:67 > rp.jit.spec:AotSpec.build_and_load:66 > open"});
  // `backend_modules[backend]()` calls each of them.
  auto g = from(src, "rp.inferred", "via_dict_item");
  CHECK(unresolved(g) == std::vector<std::string>{});
  CHECK(g.functions == 3);  // via_dict_item, gen_fp4, gen_fp8
}

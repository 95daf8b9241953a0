// Issue 27: the walk follows a method call to every override in the subclasses it has
// read, and an abstract method nothing overrides is a call it could not follow, never a
// resolved one.
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

const char* kSpec = R"(import abc
import os
import subprocess


class Spec(abc.ABC):
    @abc.abstractmethod
    def build(self):
        ...

    def build_and_load(self):
        self.build()
        return 1


class NinjaSpec(Spec):
    def build(self):
        subprocess.run(["ninja"])


def gen() -> Spec:
    return NinjaSpec()


def entry():
    gen().build_and_load()


class Loader:
    def run(self):
        return self.hook()

    def hook(self):
        return None


class FileLoader(Loader):
    def hook(self):
        return open("/etc/hostname").read()


def load():
    return FileLoader().run()


class A:
    def go(self):
        return 1


class B:
    def go(self):
        return os.listdir(".")


BACKENDS = {"a": A, "b": B}


def pick(name):
    return BACKENDS[name]().go()


class Lonely(abc.ABC):
    def work(self):
        """Subclasses do the work."""
        raise NotImplementedError


def lonely(x: Lonely):
    return x.work()


class Quiet:
    def close(self):
        ...


def closes(q: Quiet):
    q.close()


def make_spec(fast):
    if fast:
        return NinjaSpec()
    return NinjaSpec()


def unannotated():
    make_spec(True).build_and_load()
)";

const char* kProps = R"(import pathlib


class Built:
    @property
    def path(self) -> pathlib.Path:
        return pathlib.Path("/tmp/x")

    @property
    def is_built(self) -> bool:
        return self.path.exists()

    def load(self):
        if self.is_built:
            return 1
        return 0

    def ready(self):
        return not self.is_built and True

    def label(self):
        return f"built={self.is_built}"


def load_built():
    return Built().load()


def ready():
    return Built().ready()


def label():
    return Built().label()
)";

const char* kJit = R"(import contextlib
import os
from typing import overload

from filelock import FileLock

from dispatchy import handlers


def load_module(name, need_lock=True):
    lock = FileLock("/tmp/" + name + ".lock") if need_lock else contextlib.nullcontext()
    with lock:
        return name


def load_fast(name):
    return load_module(name, need_lock=False)


def load_positional(name):
    return load_module(name, False)


def load_safe(name):
    return load_module(name)


def load_variable(name, flag):
    return load_module(name, need_lock=flag)


def load_variable_positional(name, flag):
    return load_module(name, flag)


def load_either(name):
    load_module(name, need_lock=False)
    return load_module(name, need_lock=True)


def build(name, verbose=False):
    if not verbose:
        return name
    print("building", name)
    helper(name)
    return name


def helper(name):
    os.listdir(name)


def build_quiet():
    return build("x")


def build_loud():
    return build("x", verbose=True)


def run_handler(name):
    return getattr(handlers, name)()


def run_remove():
    return getattr(handlers, "remove_it")()


@overload
def convert(x: int) -> int: ...
@overload
def convert(x: str) -> str: ...
def convert(x):
    return os.path.exists(x)


@overload
def late(x: int) -> int: ...
def late(x):
    return os.listdir(x)
@overload
def late(x: str) -> str: ...


def converts():
    return convert(1) and late(2)
)";

const char* kHandlers = R"(import os
import subprocess


def remove_it():
    os.listdir("/tmp/x")


def spawn():
    subprocess.run(["true"])


def nothing():
    return 1
)";

// A base whose only implementations live in modules nothing the walk reads imports.
const char* kFarBase = R"(import abc


class FarSpec(abc.ABC):
    @abc.abstractmethod
    def build(self):
        ...


def far(spec: FarSpec):
    spec.build()
)";

const char* kFarNinja = R"(import subprocess

from dispatchy.far_base import FarSpec


class NinjaFar(
    FarSpec
):
    def build(self):
        subprocess.run(["ninja"])
)";

const char* kFarCuda = R"(import os

from .ninja import NinjaFar


class CudaFar(NinjaFar):
    def build(self):
        os.system("nvcc --version")
)";

// A package that hands out its backends by name, as torch does (`getattr(torch,
// backend_name).is_available()` in torch.serialization).
const char* kDevpick = R"(from devpick import cpu as cpu, cuda as cuda, util as util, xpu as xpu
from devpick.cuda import is_available as cuda_available
)";

const char* kDevpickCuda = R"(import os
import subprocess


def is_available():
    return subprocess.run(["nvidia-smi"]).returncode == 0


def device_count():
    return len(os.listdir("/dev/nvidia-caps"))
)";

const char* kDevpickCpu = R"(def is_available():
    return True


def device_count():
    return 1
)";

const char* kDevpickXpu = R"(import os


def is_available():
    return os.path.exists("/dev/dri")
)";

const char* kDevpickLoad = R"(import devpick


def restore(backend_name):
    device_module = getattr(devpick, backend_name)
    if not device_module.is_available():
        raise RuntimeError(backend_name)
    return device_module.device_count()


def unknown(backend_name):
    device_module = getattr(devpick, backend_name)
    return device_module.synchronize()
)";

struct DispatchEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  DispatchEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    testsupport::spit(venv.site_packages + "/dispatchy/__init__.py", "");
    testsupport::spit(venv.site_packages + "/dispatchy/spec.py", kSpec);
    testsupport::spit(venv.site_packages + "/dispatchy/props.py", kProps);
    testsupport::spit(venv.site_packages + "/dispatchy/jit.py", kJit);
    testsupport::spit(venv.site_packages + "/dispatchy/handlers.py", kHandlers);
    testsupport::spit(venv.site_packages + "/dispatchy/far_base.py", kFarBase);
    testsupport::spit(venv.site_packages + "/dispatchy/backends/__init__.py", "");
    testsupport::spit(venv.site_packages + "/dispatchy/backends/ninja.py", kFarNinja);
    testsupport::spit(venv.site_packages + "/dispatchy/backends/cuda.py", kFarCuda);
    testsupport::spit(venv.site_packages + "/devpick/__init__.py", kDevpick);
    testsupport::spit(venv.site_packages + "/devpick/cuda.py", kDevpickCuda);
    testsupport::spit(venv.site_packages + "/devpick/cpu.py", kDevpickCpu);
    testsupport::spit(venv.site_packages + "/devpick/xpu.py", kDevpickXpu);
    testsupport::spit(venv.site_packages + "/devpick/util.py", "def helper():\n    return 0\n");
    testsupport::spit(venv.site_packages + "/devpick/load.py", kDevpickLoad);
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
};

}  // namespace

TEST_CASE("audit follows an abstract method to the subclass that implements it", "[e2e][audit]") {
  DispatchEnv env;
  auto r = env.sp({"audit", "dispatchy.spec:entry"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("[1] subprocess.run (process, error: spawns a process, which dynamo cannot trace) [subprocess: docs/guide/rules.md#subprocess]\n"
                   "    dispatchy.spec:entry                dispatchy/spec.py:26\n"
                   "    dispatchy.spec:Spec.build_and_load  dispatchy/spec.py:12\n"
                   "    dispatchy.spec:NinjaSpec.build      dispatchy/spec.py:18  (via subclass "
                   "dispatchy.spec.NinjaSpec)\n") != std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:entry"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["steps"][2]["via"] == "via subclass dispatchy.spec.NinjaSpec");
  CHECK(j["chains"][0]["steps"][1]["via"].is_null());
  CHECK(j["complete"] == true);
}

TEST_CASE("audit follows a base method's hook to a subclass's override", "[e2e][audit]") {
  DispatchEnv env;
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:load"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["operation"] == "open");
  CHECK(j["chains"][0]["steps"].back()["function"] == "dispatchy.spec:FileLoader.hook");
}

TEST_CASE("audit follows a method of every class in a dict of classes", "[e2e][audit]") {
  DispatchEnv env;
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:pick"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["operation"] == "os.listdir");
  CHECK(j["chains"][0]["steps"].back()["function"] == "dispatchy.spec:B.go");
}

TEST_CASE("an abstract method nothing overrides leaves the answer incomplete, and --strict says so",
          "[e2e][audit]") {
  DispatchEnv env;
  auto r = env.sp({"audit", "dispatchy.spec:lonely"});
  INFO(r.out + r.err);
  CHECK(r.out.find("every call on the way was resolved") == std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:lonely"}).out);
  CHECK(j["complete"] == false);
  REQUIRE(j["unresolved"].size() == 1);
  CHECK(j["unresolved"][0]["call"] == "x.work");
  CHECK(j["unresolved"][0]["why"] ==
        "abstract method dispatchy.spec.Lonely.work: no subclass the walk read overrides it");
  auto strict = env.sp({"audit", "--strict", "dispatchy.spec:lonely"});
  CHECK(strict.status == 3);
}

TEST_CASE("a property read in a condition, a boolean operator or an f-string runs it", "[e2e][audit]") {
  DispatchEnv env;
  for (std::string entry : {"load_built", "ready", "label"}) {
    INFO(entry);
    auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.props:" + entry}).out);
    REQUIRE(j["chains"].size() == 1);
    CHECK(j["chains"][0]["operation"] == "pathlib.Path.exists");
    CHECK(j["chains"][0]["steps"].back()["function"] == "dispatchy.props:Built.is_built");
  }
}

TEST_CASE("what an unannotated function returns is what all its returns make", "[e2e][audit]") {
  DispatchEnv env;
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:unannotated"}).out);
  REQUIRE(j["chains"].size() == 1);
  CHECK(j["chains"][0]["operation"] == "subprocess.run");
  CHECK(j["chains"][0]["steps"][1]["function"] == "dispatchy.spec:Spec.build_and_load");
  CHECK(j["complete"] == true);
}

TEST_CASE("a method whose body is `...` is abstract only in an ABC or a Protocol", "[e2e][audit]") {
  DispatchEnv env;
  // Quiet.close does nothing: resolved, complete.
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.spec:closes"}).out);
  CHECK(j["complete"] == true);
  CHECK(j["unresolved"].empty());
}

TEST_CASE("a branch the callers' literal arguments rule out is left out, and said to be", "[e2e][audit]") {
  DispatchEnv env;
  auto safe = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:load_safe"}).out);
  REQUIRE(safe["chains"].size() == 1);
  CHECK(safe["chains"][0]["operation"] == "filelock.FileLock");
  CHECK(safe["ruled_out"].empty());
  for (std::string entry : {"load_fast", "load_positional"}) {
    INFO(entry);
    auto r = env.sp({"audit", "dispatchy.jit:" + entry});
    INFO(r.out + r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("no flagged operation found") != std::string::npos);
    CHECK(r.out.find("1 call left out: the literal arguments of every call reaching them rule their branch out:\n"
                     "    dispatchy/jit.py:11  dispatchy.jit:load_module  filelock.FileLock  (runs only if need_lock; "
                     "every call passes need_lock=False)\n") != std::string::npos);
    auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:" + entry}).out);
    CHECK(j["chains"].empty());
    REQUIRE(j["ruled_out"].size() == 1);
    CHECK(j["ruled_out"][0]["call"] == "filelock.FileLock");
    CHECK(j["ruled_out"][0]["line"] == 11);
  }
  // A value not known here may be True.
  for (std::string entry : {"load_variable", "load_variable_positional"}) {
    INFO(entry);
    auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:" + entry}).out);
    CHECK(j["chains"].size() == 1);
    CHECK(j["ruled_out"].empty());
  }
  // One caller passes False, another True: the branch may run.
  auto either = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:load_either"}).out);
  CHECK(either["chains"].size() == 1);
  CHECK(either["ruled_out"].empty());
  // The entry itself is called by the user, with anything.
  auto entry = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:load_module"}).out);
  CHECK(entry["chains"].size() == 1);
}

TEST_CASE("a default argument rules a branch out, and with it what only that branch calls", "[e2e][audit]") {
  DispatchEnv env;
  auto quiet = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:build_quiet"}).out);
  INFO(quiet.dump(2));
  CHECK(quiet["chains"].empty());
  REQUIRE(quiet["ruled_out"].size() == 2);
  CHECK(quiet["ruled_out"][0]["call"] == "print");
  CHECK(quiet["ruled_out"][0]["why"] == "runs only if verbose; every call passes verbose=False");
  CHECK(quiet["ruled_out"][1]["call"] == "helper");
  auto loud = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:build_loud"}).out);
  CHECK(loud["chains"].size() == 2);
  CHECK(loud["ruled_out"].empty());
}

TEST_CASE("getattr over a module follows each of its functions, and with a literal name only that one", "[e2e][audit]") {
  DispatchEnv env;
  auto any = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:run_handler"}).out);
  INFO(any.dump(2));
  REQUIRE(any["chains"].size() == 2);
  CHECK(any["chains"][0]["operation"] == "os.listdir");
  CHECK(any["chains"][0]["steps"][1]["function"] == "dispatchy.handlers:remove_it");
  CHECK(any["chains"][1]["operation"] == "subprocess.run");
  // Every function is followed, yet which one runs is the run's choice: not complete.
  CHECK(any["complete"] == false);
  REQUIRE(any["unresolved"].size() == 1);
  CHECK(any["unresolved"][0]["why"] == "an attribute of dispatchy.handlers named only at run time: each function and "
                                       "class it binds is followed, but which one runs is the run's choice");
  auto one = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:run_remove"}).out);
  REQUIRE(one["chains"].size() == 1);
  CHECK(one["chains"][0]["operation"] == "os.listdir");
}

TEST_CASE("a submodule taken by getattr on its package: the method of each submodule that defines it", "[e2e][audit]") {
  DispatchEnv env;
  auto r = env.sp({"--json", "audit", "devpick.load:restore"});
  INFO(r.out + r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> seen;
  for (auto& c : j["chains"]) seen.insert(c["operation"].get<std::string>() + " in " +
                                          c["steps"][1]["function"].get<std::string>());
  // cpu's are followed too and do nothing; util defines neither.
  CHECK(seen == std::set<std::string>{"subprocess.run in devpick.cuda:is_available",
                                      "os.listdir in devpick.cuda:device_count",
                                      "os.path.exists in devpick.xpu:is_available"});
  CHECK(j["complete"] == true);
  // A method no submodule defines is a call the walk could not follow, and says why.
  auto none = env.sp({"--json", "audit", "--strict", "devpick.load:unknown"});
  CHECK(none.status == 3);  // --strict: not every call was followed
  auto u = nlohmann::json::parse(none.out)["unresolved"];
  REQUIRE(u.size() == 1);
  CHECK(u[0]["call"] == "device_module.synchronize");
  CHECK(u[0]["why"] == "an attribute of devpick named only at run time: no submodule devpick imports defines synchronize");
}

TEST_CASE("@overload signatures are never the definition that runs", "[e2e][audit]") {
  DispatchEnv env;
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.jit:converts"}).out);
  INFO(j.dump(2));
  REQUIRE(j["chains"].size() == 2);
  CHECK(j["chains"][0]["operation"] == "os.path.exists");
  CHECK(j["chains"][0]["steps"][1]["line"] == 74);
  CHECK(j["chains"][1]["operation"] == "os.listdir");
  CHECK(j["chains"][1]["steps"][1]["function"] == "dispatchy.jit:late");
}

TEST_CASE("overrides in modules the walk never read are found across the package", "[e2e][audit]") {
  DispatchEnv env;
  auto r = env.sp({"audit", "dispatchy.far_base:far"});
  INFO(r.out + r.err);
  CHECK(r.out.find("dispatchy.backends.ninja:NinjaFar.build") != std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "dispatchy.far_base:far"}).out);
  REQUIRE(j["chains"].size() == 2);
  CHECK(j["chains"][0]["operation"] == "os.system");
  CHECK(j["chains"][0]["steps"][1]["function"] == "dispatchy.backends.cuda:CudaFar.build");
  // Nothing walked makes a backend (a plugin does, elsewhere): every override, said so.
  CHECK(j["chains"][0]["steps"][1]["via"] ==
        "via subclass dispatchy.backends.cuda.CudaFar (none of them is made in the walked code)");
  CHECK(j["chains"][1]["operation"] == "subprocess.run");
  CHECK(j["complete"] == true);
}

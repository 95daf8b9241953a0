// Audit precision, one construct per fixture package built here (issue 38): only calls
// are operations (no pure attribute, no class used as a value, no pure pathlib method);
// calls into modules not installed are counted (audit_missing_test.cpp).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

struct PrecisionEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  explicit PrecisionEnv(const testsupport::WheelSpec& spec) : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    venv.install(testsupport::build_wheel(spec, tmp.path + "/wheels"));
  }
  nlohmann::json audit(const std::string& entry) const {
    auto r = testsupport::run_sitepatch({"--venv", venv.root, "--json", "audit", entry});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  }
  // Each chain as "op (rule) <- function:line".
  std::vector<std::string> chains(const std::string& entry) const {
    std::vector<std::string> out;
    auto doc = audit(entry);
    for (auto& c : doc["chains"]) {
      auto& last = c["steps"].back();
      out.push_back(c["operation"].get<std::string>() + " (" + c["rule"]["id"].get<std::string>() + ") <- " +
                    last["function"].get<std::string>() + ":" + std::to_string(last["line"].get<int>()));
    }
    return out;
  }
};

}  // namespace

TEST_CASE("audit: only calls are operations: no pure attribute, class used as a value or pure pathlib method",
          "[e2e][audit]") {
  PrecisionEnv env({"purepath",
                    "1.0",
                    {{"purepath/__init__.py", ""},
                     {"purepath/build.py",
                      "import contextlib\n"
                      "import subprocess\n"
                      "from pathlib import Path\n"
                      "\n"
                      "\n"
                      "def build(root: Path):\n"
                      "    with contextlib.suppress(subprocess.CalledProcessError):\n"
                      "        pass\n"
                      "    parent = root.parent\n"
                      "    lib = root.with_suffix('.so')\n"
                      "    name = root.name\n"
                      "    rel = root.relative_to('/')\n"
                      "    joined = root.joinpath('x')\n"
                      "    if root.exists():\n"
                      "        return root.read_text()\n"
                      "    return [parent, lib, name, rel, joined]\n"}}});
  CHECK(env.chains("purepath.build:build") ==
        std::vector<std::string>{"pathlib.Path.exists (pathlib-check) <- purepath.build:build:14",
                                 "pathlib.Path.read_text (pathlib-io) <- purepath.build:build:15"});
}

namespace {

// filelock's shape: a base whose acquire() calls the abstract _acquire(), the platform
// lock an alias of one subclass, and other subclasses (soft, async) beside it.
testsupport::WheelSpec lockish() {
  return {"lockish",
          "1.0",
          {{"lockish/__init__.py",
            "from ._api import BaseFileLock\n"
            "from ._unix import UnixFileLock\n"
            "from ._soft import SoftFileLock\n"
            "from .asyncio import AsyncUnixFileLock\n"
            "\n"
            "FileLock = UnixFileLock\n"},
           {"lockish/_api.py",
            "class BaseFileLock:\n"
            "    def __init__(self, path):\n"
            "        self.path = path\n"
            "\n"
            "    def acquire(self):\n"
            "        self._acquire()\n"
            "        return self\n"
            "\n"
            "    def _acquire(self):\n"
            "        raise NotImplementedError\n"},
           {"lockish/_unix.py",
            "import os\n"
            "from ._api import BaseFileLock\n"
            "\n"
            "\n"
            "class UnixFileLock(BaseFileLock):\n"
            "    def _acquire(self):\n"
            "        os.makedirs(self.path, exist_ok=True)\n"},
           {"lockish/_soft.py",
            "import time\n"
            "from ._api import BaseFileLock\n"
            "\n"
            "\n"
            "class SoftFileLock(BaseFileLock):\n"
            "    def _acquire(self):\n"
            "        time.sleep(0.05)\n"},
           {"lockish/asyncio.py",
            "import subprocess\n"
            "from ._unix import UnixFileLock\n"
            "\n"
            "\n"
            "class AsyncUnixFileLock(UnixFileLock):\n"
            "    def _acquire(self):\n"
            "        subprocess.run(['true'])\n"},
           {"lockuser/__init__.py", ""},
           {"lockuser/cache.py",
            "from lockish import BaseFileLock, FileLock, SoftFileLock\n"
            "\n"
            "\n"
            "def load(path):\n"
            "    lock = FileLock(path)\n"
            "    lock.acquire()\n"
            "    return path\n"
            "\n"
            "\n"
            "def any_lock(lock: BaseFileLock):\n"
            "    lock.acquire()\n"
            "\n"
            "\n"
            "def make_soft(path):\n"
            "    return SoftFileLock(path)\n"
            "\n"
            "\n"
            "def soft_then_any(path):\n"
            "    any_lock(make_soft(path))\n"}}};
}

}  // namespace

TEST_CASE("audit: a receiver of a known class is followed by its MRO, not to every subclass", "[e2e][audit]") {
  PrecisionEnv env(lockish());
  // FileLock(path).acquire(): self is a UnixFileLock inside acquire; the soft and async
  // locks, which it can never be, are not reached.
  CHECK(env.chains("lockuser.cache:load") ==
        std::vector<std::string>{"os.makedirs (os-makedirs) <- lockish._unix:UnixFileLock._acquire:7"});
}

TEST_CASE("audit: an unknown receiver dispatches to the subclasses the walked code makes, else to every one, "
          "and says which",
          "[e2e][audit]") {
  PrecisionEnv env(lockish());
  // Nothing walked makes a lock: every override, each step saying so.
  auto any = env.chains("lockuser.cache:any_lock");
  std::sort(any.begin(), any.end());
  CHECK(any == std::vector<std::string>{"os.makedirs (os-makedirs) <- lockish._unix:UnixFileLock._acquire:7",
                                        "subprocess.run (subprocess) <- lockish.asyncio:AsyncUnixFileLock._acquire:7",
                                        "time.sleep (time-sleep) <- lockish._soft:SoftFileLock._acquire:7"});
  auto r = testsupport::run_sitepatch({"--venv", env.venv.root, "audit", "lockuser.cache:any_lock"});
  CHECK(r.out.find("(via subclass lockish._soft.SoftFileLock (none of them is made in the walked code))") !=
        std::string::npos);
  // The walked code makes a SoftFileLock: only its override.
  CHECK(env.chains("lockuser.cache:soft_then_any") ==
        std::vector<std::string>{"time.sleep (time-sleep) <- lockish._soft:SoftFileLock._acquire:7"});
}

TEST_CASE("audit: a star import binds what the module exports, and a compiled one's names are not a lazy export",
          "[e2e][audit]") {
  PrecisionEnv env({"starpkg",
                    "1.0",
                    {{"starpkg/__init__.py",
                      "from starpkg._impl import *\n"
                      "from starpkg._native import *\n"
                      "\n"
                      "\n"
                      "def __getattr__(name):\n"
                      "    import importlib\n"
                      "    return importlib.import_module('starpkg.' + name)\n"},
                     {"starpkg/_impl.py",
                      "import subprocess\n"
                      "\n"
                      "__all__ = ['public_run']\n"
                      "\n"
                      "\n"
                      "def public_run():\n"
                      "    subprocess.run(['true'])\n"
                      "\n"
                      "\n"
                      "def also_public():\n"
                      "    subprocess.check_output(['true'])\n"},
                     {"starpkg/user.py",
                      "import starpkg\n"
                      "\n"
                      "\n"
                      "def f():\n"
                      "    starpkg.public_run()\n"
                      "    starpkg.also_public()\n"
                      "    return starpkg.device('cpu')\n"}}});
  // public_run is in _impl's __all__; also_public is not, so the star import does not
  // bind it; device comes from the compiled _native: neither is __getattr__'s, so no
  // importlib chain, and both are calls not followed.
  CHECK(env.chains("starpkg.user:f") ==
        std::vector<std::string>{"subprocess.run (subprocess) <- starpkg._impl:public_run:7"});
  auto r = testsupport::run_sitepatch({"--venv", env.venv.root, "--json", "audit", "starpkg.user:f"});
  auto doc = nlohmann::json::parse(r.out);
  std::vector<std::string> why;
  for (auto& u : doc["unresolved"]) why.push_back(u["call"].get<std::string>() + ": " + u["why"].get<std::string>());
  CHECK(why == std::vector<std::string>{
                   "starpkg.also_public: made by the compiled module starpkg._native (a star import binds it), which "
                   "the walk cannot read",
                   "starpkg.device: made by the compiled module starpkg._native (a star import binds it), which the "
                   "walk cannot read"});
}

TEST_CASE("audit: implicit calls (if x, for, x[k], x + y, with) run the special methods of a known class, and of "
          "the classes the walked code makes",
          "[e2e][audit]") {
  PrecisionEnv env({"implicit",
                    "1.0",
                    {{"implicit/__init__.py", ""},
                     {"implicit/probes.py",
                      "import os\n"
                      "import time\n"
                      "\n"
                      "\n"
                      "class Probe:\n"
                      "    def __bool__(self):\n"
                      "        return os.path.isfile('/etc/probe')\n"
                      "\n"
                      "\n"
                      "class Items:\n"
                      "    def __iter__(self):\n"
                      "        return iter(os.listdir('/'))\n"
                      "\n"
                      "    def __getitem__(self, k):\n"
                      "        return open(k).read()\n"
                      "\n"
                      "    def __add__(self, other):\n"
                      "        os.makedirs('/tmp/x', exist_ok=True)\n"
                      "        return self\n"
                      "\n"
                      "\n"
                      "class Held:\n"
                      "    def __enter__(self):\n"
                      "        return self\n"
                      "\n"
                      "    def __exit__(self, *exc):\n"
                      "        time.sleep(0.01)\n"
                      "\n"
                      "\n"
                      "def known():\n"
                      "    p = Probe()\n"
                      "    items = Items()\n"
                      "    if p:\n"
                      "        return items['k']\n"
                      "    for x in Items():\n"
                      "        pass\n"
                      "    with Held():\n"
                      "        return items + items\n"
                      "\n"
                      "\n"
                      "def unknown(p):\n"
                      "    if not p:\n"
                      "        return 1\n"
                      "\n"
                      "\n"
                      "def make():\n"
                      "    return Probe()\n"
                      "\n"
                      "\n"
                      "def both():\n"
                      "    unknown(make())\n"}}});
  auto known = env.chains("implicit.probes:known");
  std::sort(known.begin(), known.end());
  CHECK(known == std::vector<std::string>{"open (open) <- implicit.probes:Items.__getitem__:15",
                                          "os.listdir (os-listdir) <- implicit.probes:Items.__iter__:12",
                                          "os.makedirs (os-makedirs) <- implicit.probes:Items.__add__:18",
                                          "os.path.isfile (os-path-isfile) <- implicit.probes:Probe.__bool__:7",
                                          "time.sleep (time-sleep) <- implicit.probes:Held.__exit__:27"});
  // p's class is not known in unknown(): nothing is made there, nothing followed; from
  // both(), which makes a Probe, its __bool__ runs.
  CHECK(env.chains("implicit.probes:unknown").empty());
  CHECK(env.chains("implicit.probes:both") ==
        std::vector<std::string>{"os.path.isfile (os-path-isfile) <- implicit.probes:Probe.__bool__:7"});
}

TEST_CASE("audit: a path joined with / from an annotated parameter or a local keeps its class", "[e2e][audit]") {
  PrecisionEnv env({"joined",
                    "1.0",
                    {{"joined/__init__.py", ""},
                     {"joined/m.py",
                      "from pathlib import Path\n"
                      "\n"
                      "\n"
                      "def from_param(path: Path):\n"
                      "    tmp = path.parent / 'x'\n"
                      "    tmp.open()\n"
                      "\n"
                      "\n"
                      "def from_local(root):\n"
                      "    p = Path(root)\n"
                      "    q = p / 'y'\n"
                      "    q.exists()\n"
                      "    (p / 'z').mkdir()\n"}}});
  CHECK(env.chains("joined.m:from_param") ==
        std::vector<std::string>{"pathlib.Path.open (pathlib-io) <- joined.m:from_param:6"});
  auto local = env.chains("joined.m:from_local");
  std::sort(local.begin(), local.end());
  CHECK(local == std::vector<std::string>{"pathlib.Path.exists (pathlib-check) <- joined.m:from_local:12",
                                          "pathlib.Path.mkdir (pathlib-io) <- joined.m:from_local:13"});
}

TEST_CASE("audit: a parameter holds what its caller passes, where the callee says nothing", "[e2e][audit]") {
  PrecisionEnv env({"passed",
                    "1.0",
                    {{"passed/__init__.py", ""},
                     {"passed/m.py",
                      "from pathlib import Path\n"
                      "\n"
                      "\n"
                      "class Cache:\n"
                      "    def __init__(self, folder):\n"
                      "        folder.mkdir(exist_ok=True)\n"
                      "\n"
                      "\n"
                      "def read(path):\n"
                      "    return path.read_text()\n"
                      "\n"
                      "\n"
                      "def entry(root):\n"
                      "    base = Path(root)\n"
                      "    Cache(folder=base / 'cache')\n"
                      "    return read(Path(root, 'x'))\n"}}});
  auto chains = env.chains("passed.m:entry");
  std::sort(chains.begin(), chains.end());
  CHECK(chains == std::vector<std::string>{"pathlib.Path.mkdir (pathlib-io) <- passed.m:Cache.__init__:6",
                                           "pathlib.Path.read_text (pathlib-io) <- passed.m:read:10"});
}

TEST_CASE("audit: a registry of functools.partial items, iterated and called, calls what each wraps",
          "[e2e][audit]") {
  PrecisionEnv env({"registry",
                    "1.0",
                    {{"registry/__init__.py", ""},
                     {"registry/m.py",
                      "import functools\n"
                      "import os\n"
                      "import shutil\n"
                      "\n"
                      "STEPS = [functools.partial(os.makedirs, exist_ok=True), functools.partial(shutil.rmtree)]\n"
                      "\n"
                      "\n"
                      "def run_all(path):\n"
                      "    for step in STEPS:\n"
                      "        step(path)\n"
                      "\n"
                      "\n"
                      "def first(path):\n"
                      "    return STEPS[0](path)\n"}}});
  auto all = env.chains("registry.m:run_all");
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::string>{"os.makedirs (os-makedirs) <- registry.m:run_all:10",
                                        "shutil.rmtree (shutil) <- registry.m:run_all:10"});
  // STEPS[0] is the list's first item, by its position: only what it wraps.
  CHECK(env.chains("registry.m:first") == std::vector<std::string>{"os.makedirs (os-makedirs) <- registry.m:first:14"});
}

TEST_CASE("audit: items of a list of made objects, getattr over literal names, str +, arguments two callers down",
          "[e2e][audit]") {
  PrecisionEnv env({"itemsof",
                    "1.0",
                    {{"itemsof/__init__.py", ""},
                     {"itemsof/m.py",
                      "import os\n"
                      "from pathlib import Path\n"
                      "\n"
                      "NAMES = (\"makedirs\", \"listdir\")\n"
                      "\n"
                      "\n"
                      "def indexed(a, b):\n"
                      "    dirs = [Path(a), Path(b)]\n"
                      "    return dirs[0].resolve()\n"
                      "\n"
                      "\n"
                      "def iterated(a, b):\n"
                      "    made = [Path(x) for x in (a, b)]\n"
                      "    for d in made:\n"
                      "        d.mkdir()\n"
                      "\n"
                      "\n"
                      "def named(p):\n"
                      "    for name in NAMES:\n"
                      "        getattr(os, name)(p)\n"
                      "    for name in (\"stat\",):\n"
                      "        getattr(os, name)(p)\n"
                      "\n"
                      "\n"
                      "def helper(q):\n"
                      "    return q.read_text()\n"
                      "\n"
                      "\n"
                      "def middle(p):\n"
                      "    return helper(p)\n"
                      "\n"
                      "\n"
                      "def two_down(root):\n"
                      "    return middle(Path(root))\n"
                      "\n"
                      "\n"
                      "def joined(a):\n"
                      "    name = a + \".so\"\n"
                      "    return name.upper().strip()\n"
                      "\n"
                      "\n"
                      "def mixed(a):\n"
                      "    xs = [Path(a), a]\n"
                      "    return xs[0].resolve()\n"}}});
  CHECK(env.chains("itemsof.m:indexed") ==
        std::vector<std::string>{"pathlib.Path.resolve (pathlib-io) <- itemsof.m:indexed:9"});
  CHECK(env.chains("itemsof.m:iterated") ==
        std::vector<std::string>{"pathlib.Path.mkdir (pathlib-io) <- itemsof.m:iterated:15"});
  auto named = env.chains("itemsof.m:named");
  std::sort(named.begin(), named.end());
  CHECK(named == std::vector<std::string>{"os.listdir (os-listdir) <- itemsof.m:named:20",
                                          "os.makedirs (os-makedirs) <- itemsof.m:named:20",
                                          "os.stat (os-stat) <- itemsof.m:named:22"});
  CHECK(env.chains("itemsof.m:two_down") ==
        std::vector<std::string>{"pathlib.Path.read_text (pathlib-io) <- itemsof.m:helper:26"});
  auto joined = env.audit("itemsof.m:joined");
  CHECK(joined["unresolved"].size() == 0);
  // Items of more than one kind, read by a literal position: the item at that position.
  CHECK(env.chains("itemsof.m:mixed") == std::vector<std::string>{"pathlib.Path.resolve (pathlib-io) <- itemsof.m:mixed:44"});
  CHECK(env.audit("itemsof.m:mixed")["unresolved"].empty());
}

TEST_CASE("audit: values through locals, loops over annotated lists, module variables, self's properties and "
          "callables passed on",
          "[e2e][audit]") {
  PrecisionEnv env({"values",
                    "1.0",
                    {{"values/__init__.py", ""},
                     {"values/env.py",
                      "import pathlib\n"
                      "from typing import List\n"
                      "\n"
                      "ROOT = pathlib.Path(\"/tmp/values\")\n"
                      "DIRS: List[pathlib.Path] = []\n"},
                     {"values/m.py",
                      "import logging\n"
                      "import subprocess\n"
                      "from pathlib import Path\n"
                      "from types import ModuleType\n"
                      "from typing import List, Optional\n"
                      "\n"
                      "from . import env\n"
                      "\n"
                      "\n"
                      "def annotated(paths: Optional[List[Path]], more: list[Path]):\n"
                      "    for p in paths:\n"
                      "        p.resolve()\n"
                      "    return [q.is_dir() for q in more] + [d.exists() for d in env.DIRS]\n"
                      "\n"
                      "\n"
                      "def module_variable():\n"
                      "    tmpdir = env.ROOT / \"tmp\"\n"
                      "    if not tmpdir.exists():\n"
                      "        tmpdir.mkdir()\n"
                      "\n"
                      "\n"
                      "def twice(a, b):\n"
                      "    include = Path(a)\n"
                      "    if b:\n"
                      "        include = (Path(b).parent / \"Headers\").absolute()\n"
                      "    return include.read_text()\n"
                      "\n"
                      "\n"
                      "class Job:\n"
                      "    @property\n"
                      "    def build_dir(self) -> Path:\n"
                      "        return Path(\"/tmp/job\")\n"
                      "\n"
                      "    def prepare(self):\n"
                      "        where = self.build_dir\n"
                      "        where.parent.mkdir()\n"
                      "\n"
                      "\n"
                      "class Writer:\n"
                      "    def __init__(self, name):\n"
                      "        self.f = open(name, \"wb\")\n"
                      "\n"
                      "\n"
                      "class Buffer:\n"
                      "    def __init__(self, name):\n"
                      "        self.name = name\n"
                      "\n"
                      "\n"
                      "def chosen(name, is_path):\n"
                      "    if is_path:\n"
                      "        container = Writer\n"
                      "    else:\n"
                      "        container = Buffer\n"
                      "    return container(name)\n"
                      "\n"
                      "\n"
                      "def _setup(make_handler, log):\n"
                      "    log.addHandler(make_handler())\n"
                      "\n"
                      "\n"
                      "def handlers(log):\n"
                      "    _setup(logging.StreamHandler, log)\n"
                      "\n"
                      "\n"
                      "def imp() -> Optional[ModuleType]:\n"
                      "    return None\n"
                      "\n"
                      "\n"
                      "def opaque(cmd):\n"
                      "    mod = imp()\n"
                      "    return mod.run(cmd)\n"
                      "\n"
                      "\n"
                      "class Importer:\n"
                      "    def __init__(self):\n"
                      "        self.hooks = {}\n"
                      "        self.hooks[\"import\"] = self.do_import\n"
                      "\n"
                      "    def do_import(self, name):\n"
                      "        return subprocess.run([name])\n"
                      "\n"
                      "\n"
                      "def level(v):\n"
                      "    if v not in logging._levelToName:\n"
                      "        return None\n"
                      "    return v\n"}}});
  auto sorted = [&](const std::string& entry) {
    auto c = env.chains(entry);
    std::sort(c.begin(), c.end());
    return c;
  };
  CHECK(sorted("values.m:annotated") == std::vector<std::string>{
                                           "pathlib.Path.exists (pathlib-check) <- values.m:annotated:13",
                                           "pathlib.Path.is_dir (pathlib-check) <- values.m:annotated:13",
                                           "pathlib.Path.resolve (pathlib-io) <- values.m:annotated:12"});
  CHECK(sorted("values.m:module_variable") == std::vector<std::string>{
                                                 "pathlib.Path.exists (pathlib-check) <- values.m:module_variable:18",
                                                 "pathlib.Path.mkdir (pathlib-io) <- values.m:module_variable:19"});
  CHECK(sorted("values.m:twice") ==
        std::vector<std::string>{"pathlib.Path.absolute (pathlib-io) <- values.m:twice:25",
                                 "pathlib.Path.read_text (pathlib-io) <- values.m:twice:26"});
  CHECK(sorted("values.m:Job.prepare") ==
        std::vector<std::string>{"pathlib.Path.mkdir (pathlib-io) <- values.m:Job.prepare:36"});
  CHECK(sorted("values.m:chosen") == std::vector<std::string>{"open (open) <- values.m:Writer.__init__:41"});
  CHECK(sorted("values.m:handlers") ==
        std::vector<std::string>{"logging.StreamHandler (logging-call) <- values.m:_setup:58"});
  // A module chosen at run time: the method called on it is not known, and said so.
  auto opaque = env.audit("values.m:opaque");
  CHECK(opaque["chains"].empty());
  REQUIRE(opaque["unresolved"].size() == 1);
  CHECK(opaque["unresolved"][0]["call"] == "mod.run");
  CHECK(opaque["unresolved"][0]["why"] == "what imp() returns is not known");
  auto strict = testsupport::run_sitepatch({"--venv", env.venv.root, "audit", "--strict", "values.m:opaque"});
  CHECK(strict.status == 3);
  // A method stored for later is not called here; a membership test calls nothing.
  CHECK(env.chains("values.m:Importer.__init__").empty());
  CHECK(env.chains("values.m:level").empty());
}

TEST_CASE("audit: a method inherited from a class outside, code only Windows or a type checker reads, a thread's "
          "target and a callable chosen by a ternary",
          "[e2e][audit]") {
  PrecisionEnv env({"elsewhere",
                    "1.0",
                    {{"elsewhere/__init__.py", ""},
                     {"elsewhere/lock/__init__.py",
                      "import sys\n"
                      "from typing import TYPE_CHECKING\n"
                      "\n"
                      "from ._unix import UnixLock\n"
                      "from ._win import WindowsLock\n"
                      "\n"
                      "if sys.platform == \"win32\":\n"
                      "    _Lock = WindowsLock\n"
                      "else:\n"
                      "    _Lock = UnixLock\n"
                      "\n"
                      "if TYPE_CHECKING:\n"
                      "    from ._soft import SoftLock\n"
                      "\n"
                      "    Lock = SoftLock\n"
                      "else:\n"
                      "    Lock = _Lock\n"},
                     {"elsewhere/lock/_unix.py",
                      "import fcntl\n"
                      "\n"
                      "\n"
                      "class UnixLock:\n"
                      "    def acquire(self):\n"
                      "        fcntl.flock(0, fcntl.LOCK_EX)\n"},
                     {"elsewhere/lock/_win.py",
                      "import subprocess\n"
                      "\n"
                      "\n"
                      "class WindowsLock:\n"
                      "    def acquire(self):\n"
                      "        subprocess.run([\"lock\"])\n"},
                     {"elsewhere/lock/_soft.py",
                      "class SoftLock:\n"
                      "    def acquire(self):\n"
                      "        open(\"/tmp/lock\", \"x\")\n"},
                     {"elsewhere/m.py",
                      "import gzip\n"
                      "import logging\n"
                      "import multiprocessing\n"
                      "import os\n"
                      "import subprocess\n"
                      "import threading\n"
                      "\n"
                      "from .lock import Lock\n"
                      "\n"
                      "\n"
                      "class AppLogger(logging.Logger):\n"
                      "    def trace(self, msg):\n"
                      "        self.log(5, msg)\n"
                      "        self.handler_count()\n"
                      "\n"
                      "\n"
                      "logger = AppLogger(\"app\")\n"
                      "\n"
                      "\n"
                      "def log_both():\n"
                      "    logger.info(\"x\")\n"
                      "    logger.trace(\"y\")\n"
                      "\n"
                      "\n"
                      "def take():\n"
                      "    Lock().acquire()\n"
                      "\n"
                      "\n"
                      "if os.name == \"nt\":\n"
                      "    def home():\n"
                      "        return subprocess.run([\"cmd\"])\n"
                      "else:\n"
                      "    def home():\n"
                      "        return os.path.exists(\"/home\")\n"
                      "\n"
                      "\n"
                      "def work():\n"
                      "    subprocess.run([\"x\"])\n"
                      "\n"
                      "\n"
                      "def spawn():\n"
                      "    p = multiprocessing.Process(target=work)\n"
                      "    t = threading.Thread(target=work, daemon=True)\n"
                      "    return p, t\n"
                      "\n"
                      "\n"
                      "def read(path, compressed):\n"
                      "    opener = gzip.open if compressed else open\n"
                      "    return opener(path)\n"
                      "\n"
                      "\n"
                      "class Proxy:\n"
                      "    def __init__(self, target):\n"
                      "        self._target = target\n"
                      "\n"
                      "    def __getattr__(self, name):\n"
                      "        return getattr(self._target, name)\n"
                      "\n"
                      "\n"
                      "def proxied(x):\n"
                      "    return Proxy(x).run()\n"
                      "\n"
                      "\n"
                      "class Worker(threading.Thread):\n"
                      "    def run(self):\n"
                      "        self._work()\n"}}});
  auto sorted = [&](const std::string& entry) {
    auto c = env.chains(entry);
    std::sort(c.begin(), c.end());
    return c;
  };
  // logging.Logger's own methods, reached through a subclass: the rule on logging.Logger.
  // (logging.Logger.* names every method of it: handler_count too, which it may have.)
  CHECK(sorted("elsewhere.m:log_both") ==
        std::vector<std::string>{"logging.Logger.handler_count (logger-method) <- elsewhere.m:AppLogger.trace:14",
                                 "logging.Logger.info (logger-method) <- elsewhere.m:log_both:21",
                                 "logging.Logger.log (logger-method) <- elsewhere.m:AppLogger.trace:13"});
  CHECK(env.audit("elsewhere.m:log_both")["unresolved"].empty());
  // Where no rule names it, a method self does not define is counted, never dropped.
  auto worker = env.audit("elsewhere.m:Worker.run");
  CHECK(worker["chains"].empty());
  REQUIRE(worker["unresolved"].size() == 1);
  CHECK(worker["unresolved"][0]["call"] == "self._work");
  CHECK(worker["unresolved"][0]["line"] == 66);
  CHECK(worker["unresolved"][0]["why"] ==
        "attribute of self, not a method it defines (threading.Thread may define it)");
  // The lock Linux runs, not the Windows arm's nor the one only a type checker reads.
  CHECK(sorted("elsewhere.m:take") ==
        std::vector<std::string>{"fcntl.flock (fcntl-flock) <- elsewhere.lock._unix:UnixLock.acquire:6"});
  CHECK(sorted("elsewhere.m:home") == std::vector<std::string>{"os.path.exists (os-path-exists) <- elsewhere.m:home:34"});
  // A process's or a thread's target runs there, not in the traced code.
  auto spawned = env.audit("elsewhere.m:spawn");
  CHECK(spawned["chains"].empty());
  CHECK(spawned["unresolved"].empty());
  // Either arm of the ternary may be what is called.
  CHECK(sorted("elsewhere.m:read") == std::vector<std::string>{"gzip.open (gzip-open) <- elsewhere.m:read:49",
                                                               "open (open) <- elsewhere.m:read:49"});
  CHECK(env.audit("elsewhere.m:read")["unresolved"].empty());
  // What a class's __getattr__ makes is not known: its __getattr__ is walked, the call counted.
  auto proxied = env.audit("elsewhere.m:proxied");
  CHECK(proxied["chains"].empty());
  std::vector<std::string> why;
  for (auto& u : proxied["unresolved"]) why.push_back(u["call"].get<std::string>() + ": " + u["why"].get<std::string>());
  CHECK_THAT(why, Catch::Matchers::VectorContains(std::string(
                      "Proxy(x).run: elsewhere.m.Proxy.run is made at run time by elsewhere.m:Proxy.__getattr__")));
}

TEST_CASE("audit: a star import of a folder of stubs beside a C extension binds the extension's names, not the "
          "module's lazy __getattr__",
          "[e2e][audit]") {
  // torch/__init__.py: `from torch._C import *`, where torch/_C/ holds only .pyi stubs
  // and torch/_C.*.so is what Python imports; torch also has a module __getattr__.
  PrecisionEnv env({"stubbed",
                    "1.0",
                    {{"stubbed/__init__.py",
                      "import importlib\n"
                      "from stubbed._C import *\n"
                      "\n"
                      "\n"
                      "def __getattr__(name):\n"
                      "    return importlib.import_module('stubbed.' + name)\n"
                      "\n"
                      "\n"
                      "def probe(p):\n"
                      "    if isinstance(p, str):\n"
                      "        return open(p)\n"},
                     {"stubbed/_C/__init__.pyi", "class device: ...\n"},
                     {"stubbed/_C.cpython-311-x86_64-linux-gnu.so", "not really a library\n"},
                     {"stubbed/use.py",
                      "import stubbed\n"
                      "\n"
                      "\n"
                      "def where(s):\n"
                      "    return stubbed.device(s)\n"}}});
  auto doc = env.audit("stubbed.use:where");
  CHECK(doc["chains"].empty());
  REQUIRE(doc["unresolved"].size() == 1);
  CHECK(doc["unresolved"][0]["call"] == "stubbed.device");
  CHECK(doc["unresolved"][0]["why"] ==
        "made by the compiled module stubbed._C (a star import binds it), which the walk cannot read");
  // Inside the module, a builtin is a builtin, not a name the compiled module may bind.
  CHECK(env.chains("stubbed:probe") == std::vector<std::string>{"open (open) <- stubbed:probe:11"});
  CHECK(env.audit("stubbed:probe")["unresolved"].empty());
}

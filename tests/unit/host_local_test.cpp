#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>

#include "sitepatch/host/host.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/hash.hpp"
#include "support/fixture.hpp"

using namespace sitepatch;
using testsupport::slurp;
using testsupport::spit;
using testsupport::TempDir;

namespace {

std::string py_out(const testsupport::Venv& v, const std::string& code) {
  auto r = v.run_python(code);
  REQUIRE(r.status == 0);
  return r.out;
}

unsigned mode_of(const std::string& path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("probe asks a venv's own Python for its facts", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  auto host = host::make_local_host();
  CHECK(host->name() == "local");

  site::Environment env = host->probe(venv.root);
  CHECK(env.python == venv.root + "/bin/python3");
  CHECK(env.prefix == venv.root);
  CHECK(env.base_prefix == py_out(venv, "import sys; print(sys.base_prefix, end='')"));
  CHECK(env.version == py_out(venv, "import platform; print(platform.python_version(), end='')"));
  CHECK(env.cache_tag == py_out(venv, "import sys; print(sys.implementation.cache_tag, end='')"));
  // The cores where its commands run: explain --run's --jobs default is half of them.
  CHECK(std::to_string(env.cpus) == py_out(venv, "import os; print(os.cpu_count(), end='')"));
  // lib64 -> lib in a venv is one folder: reported once.
  CHECK(env.site_dirs == std::vector<std::string>{venv.site_packages});

  // The interpreter itself works as well as the root; a trailing slash is fine.
  CHECK(host->probe(venv.root + "/bin/python").prefix == venv.root);
  CHECK(host->probe(venv.root + "/").prefix == venv.root);
}

TEST_CASE("probe explains what is not a Python environment", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string nowhere = tmp.path + "/x/y";
  REQUIRE_THROWS_WITH(host->probe(nowhere),
                      "no Python environment at " + nowhere + ": " + nowhere + " does not exist");

  spit(tmp.path + "/empty/README", "not a venv\n");
  REQUIRE_THROWS_WITH(host->probe(tmp.path + "/empty"),
                      tmp.path + "/empty is not a Python environment: no bin/python3 or bin/python in it");

  // A "python" that fails: its stderr and exit status are in the message.
  spit(tmp.path + "/broken/bin/python", "#!/bin/sh\necho 'cannot start: libpython missing' >&2\nexit 3\n");
  ::chmod((tmp.path + "/broken/bin/python").c_str(), 0755);
  try {
    host->probe(tmp.path + "/broken");
    FAIL("probe of a broken python did not throw");
  } catch (const Error& e) {
    std::string msg = e.what();
    CHECK(msg.find(tmp.path + "/broken/bin/python") != std::string::npos);
    CHECK(msg.find("exit status 3") != std::string::npos);
    CHECK(msg.find("cannot start: libpython missing") != std::string::npos);
  }
}

TEST_CASE("probe survives a .pth file that prints to stdout", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  spit(venv.site_packages + "/noisy.pth", "import sys; print('hello from a .pth file')\n");
  auto host = host::make_local_host();
  CHECK(host->probe(venv.root).prefix == venv.root);
  CHECK(host->compile({{"a.py", "x = 1\n"}})[0].ok);
}

TEST_CASE("compile reports syntax errors with line and message, without running code", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  auto host = host::make_local_host();
  REQUIRE_THROWS_AS(host->compile({{"a.py", "x = 1\n"}}), Error);  // no probe yet
  host->probe(venv.root);

  std::string marker = tmp.path + "/ran";
  auto results = host->compile({
      {"pkg/ok.py", "import os\nos.mkdir(" + std::string("'") + marker + "')\n"},
      {"pkg/mod.py", "def f():\n    return = 1\n"},
      {"pkg/latin.py", "# -*- coding: latin-1 -*-\ns = '\xe9'\n"},
      {"pkg/indent.py", "if True:\nx = 1\n"},
  });
  REQUIRE(results.size() == 4);
  CHECK(results[0].ok);
  CHECK(::access(marker.c_str(), F_OK) != 0);  // compiled, not executed
  CHECK_FALSE(results[1].ok);
  CHECK(results[1].line == 2);
  CHECK(results[1].message == "invalid syntax (pkg/mod.py, line 2)");
  CHECK(results[2].ok);  // the coding declaration is honoured
  CHECK_FALSE(results[3].ok);
  CHECK(results[3].line == 2);
  CHECK(results[3].message.find("indented block") != std::string::npos);
  CHECK(host->compile({}).empty());
}

TEST_CASE("read, list, realpath and remove through system calls", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string bytes("\0\x01\xff\n", 4);
  spit(tmp.path + "/d/b.bin", bytes);
  spit(tmp.path + "/d/a.py", "x\n");
  ::chmod((tmp.path + "/d/a.py").c_str(), 0640);
  ::symlink("b.bin", (tmp.path + "/d/link").c_str());

  auto files = host->read({tmp.path + "/d/b.bin", tmp.path + "/d/a.py", tmp.path + "/d", tmp.path + "/nope",
                           tmp.path + "/d/a.py/under"});
  REQUIRE(files.size() == 5);
  CHECK(files[0].exists);
  CHECK(files[0].content == bytes);
  CHECK(files[0].nlink == 1);
  CHECK(files[1].mode == 0640);
  CHECK(files[2].is_dir);
  CHECK_FALSE(files[3].exists);
  CHECK_FALSE(files[4].exists);

  auto entries = host->list(tmp.path + "/d");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].name == "a.py");
  CHECK(entries[1].name == "b.bin");
  CHECK(entries[2].name == "link");
  CHECK_FALSE(entries[2].is_dir);
  CHECK(host->list(tmp.path + "/nope").empty());

  auto real = host->realpath({tmp.path + "/d/link", tmp.path + "/d/../d/a.py", tmp.path + "/nope"});
  CHECK(real[0].value() == tmp.path + "/d/b.bin");
  CHECK(real[1].value() == tmp.path + "/d/a.py");
  CHECK_FALSE(real[2]);

  host->remove({tmp.path + "/d/a.py", tmp.path + "/d/never-there"});
  CHECK(::access((tmp.path + "/d/a.py").c_str(), F_OK) != 0);
}

TEST_CASE("write keeps the mode and breaks hard links", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  // uv installs packages as hard links into its cache: the cache must keep old bytes.
  std::string file = tmp.path + "/site/pkg/mod.py", cache = tmp.path + "/cache/mod.py";
  spit(cache, "old\n");
  ::chmod(cache.c_str(), 0750);
  std::filesystem::create_directories(tmp.path + "/site/pkg");
  REQUIRE(::link(cache.c_str(), file.c_str()) == 0);

  host->write({{file, "new\n", util::sha256_hex("old\n")}});
  CHECK(slurp(file) == "new\n");
  CHECK(mode_of(file) == 0750);
  CHECK(slurp(cache) == "old\n");
  CHECK(host->read({file})[0].nlink == 1);
  // No temp file left beside it.
  for (auto& e : host->list(tmp.path + "/site/pkg")) CHECK(e.name.find(".tmp") == std::string::npos);
}

TEST_CASE("write refuses on a hash mismatch and writes nothing of the batch", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string a = tmp.path + "/a.py", b = tmp.path + "/b.py";
  spit(a, "a\n");
  spit(b, "b changed by someone\n");
  std::string found = util::sha256_hex("b changed by someone\n");
  std::string expected = util::sha256_hex("b\n");
  REQUIRE_THROWS_WITH(host->write({{a, "A\n", util::sha256_hex("a\n")}, {b, "B\n", expected}}),
                      b + " changed since it was read (expected sha256 " + expected + ", found " + found +
                          "); nothing was written");
  CHECK(slurp(a) == "a\n");
  CHECK(slurp(b) == "b changed by someone\n");

  // An empty expected hash means "must not exist yet": it creates, with parents.
  host->write({{tmp.path + "/new/c.py", "c\n", ""}});
  CHECK(slurp(tmp.path + "/new/c.py") == "c\n");
  CHECK(mode_of(tmp.path + "/new/c.py") == 0644);
  REQUIRE_THROWS_WITH(host->write({{a, "A\n", ""}}),
                      a + " changed since it was read (expected sha256 none (a new file), found " +
                          util::sha256_hex("a\n") + "); nothing was written");
  // A missing file is not what was read either.
  REQUIRE_THROWS_WITH(host->write({{tmp.path + "/gone.py", "x", expected}}),
                      tmp.path + "/gone.py changed since it was read (expected sha256 " + expected +
                          ", found no file); nothing was written");
}

TEST_CASE("write through a symlink replaces the target and keeps the link", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  spit(tmp.path + "/real.py", "old\n");
  ::symlink("real.py", (tmp.path + "/link.py").c_str());
  host->write({{tmp.path + "/link.py", "new\n", util::sha256_hex("old\n")}});
  struct stat st;
  REQUIRE(::lstat((tmp.path + "/link.py").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(slurp(tmp.path + "/real.py") == "new\n");
}

TEST_CASE("a second lock on the same file times out with a clear message", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string path = tmp.path + "/prefix/.sitepatch/lock";
  auto first = host->lock(path, 1000);  // creates the folders
  CHECK(::access(path.c_str(), F_OK) == 0);
  REQUIRE_THROWS_WITH(host->lock(path, 100), "another sitepatch is working on this environment (lock " + path +
                                                 " held); try again later");
  first.reset();
  CHECK(host->lock(path, 100) != nullptr);
}

TEST_CASE("write: a folder that leads outside `within` is refused and nothing is written", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  spit(tmp.path + "/site/pkg/a.py", "a = 1\n");
  spit(tmp.path + "/outside/b.py", "b = 1\n");
  std::filesystem::create_directory_symlink(tmp.path + "/outside", tmp.path + "/site/evil");
  std::string site = tmp.path + "/site";
  REQUIRE_THROWS_WITH(host->write({{site + "/pkg/a.py", "a = 2\n", util::sha256_hex("a = 1\n"), site},
                                   {site + "/evil/b.py", "b = 2\n", util::sha256_hex("b = 1\n"), site}}),
                      "refusing to write " + site + "/evil/b.py: its folder is " + tmp.path +
                          "/outside, outside " + site + " (a symbolic link leads out); nothing was written");
  CHECK(slurp(site + "/pkg/a.py") == "a = 1\n");
  CHECK(slurp(tmp.path + "/outside/b.py") == "b = 1\n");
  // Inside, a symlinked folder is fine (lib64 -> lib).
  std::filesystem::create_directory_symlink(site + "/pkg", site + "/alias");
  host->write({{site + "/alias/a.py", "a = 3\n", util::sha256_hex("a = 1\n"), site}});
  CHECK(slurp(site + "/pkg/a.py") == "a = 3\n");
}

TEST_CASE("write: a rename that fails puts back the files already replaced", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string a = tmp.path + "/a.py", b = tmp.path + "/b.py", c = tmp.path + "/c.py";
  spit(a, "a = 1\n");
  spit(b, "b = 1\n");
  spit(c, "c = 1\n");
  // An immutable file cannot be replaced, even by root.
  REQUIRE(sitepatch::util::run({"chattr", "+i", c}).status == 0);
  auto unfreeze = [&] { sitepatch::util::run({"chattr", "-i", c}); };
  try {
    host->write({{a, "a = 2\n", util::sha256_hex("a = 1\n"), tmp.path},
                 {b, "b = 2\n", util::sha256_hex("b = 1\n"), tmp.path},
                 {c, "c = 2\n", util::sha256_hex("c = 1\n"), tmp.path}});
    unfreeze();
    FAIL("write did not throw");
  } catch (const Error& e) {
    unfreeze();
    CHECK(e.code() == Exit::failed);
    CHECK(std::string(e.what()) == c + ": cannot replace: Operation not permitted; nothing was written "
                                       "(the 2 file(s) replaced before it were put back)");
  }
  CHECK(slurp(a) == "a = 1\n");
  CHECK(slurp(b) == "b = 1\n");
  CHECK(slurp(c) == "c = 1\n");
  // No temp and no backup link is left behind.
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(tmp.path)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a.py", "b.py", "c.py"});
}

TEST_CASE("write: temps are private: links planted at predictable names are never followed", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string victim = tmp.path + "/victim";
  spit(victim, "precious\n");
  spit(tmp.path + "/site/m.py", "x = 1\n");
  // The names an older sitepatch used: .<name>.sitepatch-<pid>.tmp for the next pids.
  long last = std::stol(slurp("/proc/sys/kernel/ns_last_pid"));
  for (long pid = std::max(1L, last - 50); pid < last + 2000; ++pid)
    std::filesystem::create_symlink(victim, tmp.path + "/site/.m.py.sitepatch-" + std::to_string(pid) + ".tmp");
  std::error_code ec;  // this process's own pid may already be in the range
  std::filesystem::create_symlink(victim, tmp.path + "/site/.m.py.sitepatch-" + std::to_string(::getpid()) + ".tmp", ec);
  host->write({{tmp.path + "/site/m.py", "x = 2\n", util::sha256_hex("x = 1\n"), tmp.path + "/site"}});
  CHECK(slurp(victim) == "precious\n");
  CHECK(slurp(tmp.path + "/site/m.py") == "x = 2\n");
  CHECK(!std::filesystem::is_symlink(tmp.path + "/site/m.py"));
}

TEST_CASE("lock: a symlink at the lock's name, or as its folder, is refused", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string victim = tmp.path + "/victim";
  spit(victim, "precious\n");
  std::filesystem::create_directory(tmp.path + "/state");
  std::filesystem::create_symlink(victim, tmp.path + "/state/sitepatch.lock");
  REQUIRE_THROWS_WITH(host->lock(tmp.path + "/state/sitepatch.lock", 100),
                      tmp.path + "/state/sitepatch.lock is a symbolic link (to " + victim +
                          "); sitepatch never opens its lock through a link: remove it");
  CHECK(slurp(victim) == "precious\n");

  std::filesystem::create_directory(tmp.path + "/elsewhere");
  std::filesystem::create_directory_symlink(tmp.path + "/elsewhere", tmp.path + "/linked");
  REQUIRE_THROWS_WITH(host->lock(tmp.path + "/linked/sitepatch.lock", 100),
                      tmp.path + "/linked is a symbolic link (to " + tmp.path +
                          "/elsewhere); sitepatch keeps its history and lock only in a real folder: "
                          "remove the link (or give --state-dir)");
  CHECK(std::filesystem::is_empty(tmp.path + "/elsewhere"));

  // A hard link to someone's file is not a lock file either.
  std::filesystem::create_directory(tmp.path + "/hard");
  REQUIRE(::link(victim.c_str(), (tmp.path + "/hard/sitepatch.lock").c_str()) == 0);
  REQUIRE_THROWS_WITH(host->lock(tmp.path + "/hard/sitepatch.lock", 100),
                      tmp.path + "/hard/sitepatch.lock is not a lock file sitepatch made (it has other "
                                 "hard links); remove it");
  CHECK(slurp(victim) == "precious\n");
}

TEST_CASE("lock: a writer refuses a state folder others may write to", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string dir = tmp.path + "/state";
  std::filesystem::create_directory(dir);
  REQUIRE(::chmod(dir.c_str(), 0777) == 0);
  REQUIRE_THROWS_WITH(host->lock(dir + "/sitepatch.lock", 100),
                      "refusing to keep the history in " + dir + ": " + dir +
                          " is writable by other users (mode 0777), who could redirect what sitepatch writes there; "
                          "give --state-dir a folder only you can write, or run sitepatch as that user");
  REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  CHECK(host->lock(dir + "/sitepatch.lock", 100) != nullptr);
}

TEST_CASE("lock: readers share it, a writer waits for them, and no folder means no lock", "[host]") {
  TempDir tmp;
  auto host = host::make_local_host();
  std::string path = tmp.path + "/state/sitepatch.lock";
  CHECK(host->lock(path, 100, host::LockMode::shared) == nullptr);
  CHECK(!std::filesystem::exists(tmp.path + "/state"));
  auto writer = host->lock(path, 100);
  std::string held = "another sitepatch is working on this environment (lock " + path + " held); try again later";
  REQUIRE_THROWS_WITH(host->lock(path, 100, host::LockMode::shared), held);
  writer.reset();
  auto r1 = host->lock(path, 100, host::LockMode::shared);
  auto r2 = host->lock(path, 100, host::LockMode::shared);
  REQUIRE_THROWS_WITH(host->lock(path, 100), held);
}

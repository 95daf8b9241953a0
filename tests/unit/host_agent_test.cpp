// The agent's file operations, run over a local Python: the same protocol a remote
// host will speak over ssh (STYLE.md: the remote path tested against a local one first).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "host/agent_boot.hpp"
#include "host/agent_client.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/process.hpp"
#include "support/fixture.hpp"

using namespace sitepatch;
using testsupport::slurp;
using testsupport::spit;
using testsupport::TempDir;

TEST_CASE("agent: hello, read, list, realpath, write, remove over one process", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  auto env = agent.hello();
  CHECK(env.prefix == venv.root);
  CHECK(env.site_dirs == std::vector<std::string>{venv.site_packages});

  std::string bytes("\0\x01\xff\r\n", 5);
  spit(tmp.path + "/d/b.bin", bytes);
  spit(tmp.path + "/d/a.py", "x\n");
  ::chmod((tmp.path + "/d/a.py").c_str(), 0750);
  ::symlink("b.bin", (tmp.path + "/d/link").c_str());
  spit(tmp.path + "/cache/a.py", "x\n");
  ::unlink((tmp.path + "/cache/a.py").c_str());
  REQUIRE(::link((tmp.path + "/d/a.py").c_str(), (tmp.path + "/cache/a.py").c_str()) == 0);

  auto files = agent.read({tmp.path + "/d/b.bin", tmp.path + "/d/a.py", tmp.path + "/d", tmp.path + "/nope"});
  REQUIRE(files.size() == 4);
  CHECK(files[0].content == bytes);
  CHECK(files[1].mode == 0750);
  CHECK(files[1].nlink == 2);
  CHECK(files[2].is_dir);
  CHECK_FALSE(files[3].exists);

  auto entries = agent.list(tmp.path + "/d");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].name == "a.py");
  CHECK(entries[2].name == "link");
  CHECK(agent.list(tmp.path + "/nope").empty());

  auto real = agent.realpath({tmp.path + "/d/link", tmp.path + "/nope"});
  CHECK(real[0].value() == tmp.path + "/d/b.bin");
  CHECK_FALSE(real[1]);

  // Compare-and-swap: one stale hash and nothing of the batch is written.
  std::string stale = util::sha256_hex("stale");
  REQUIRE_THROWS_WITH(agent.write({{tmp.path + "/d/b.bin", "B", util::sha256_hex(bytes)},
                                   {tmp.path + "/d/a.py", "A", stale}}),
                      tmp.path + "/d/a.py changed since it was read (expected sha256 " + stale + ", found " +
                          util::sha256_hex("x\n") + "); nothing was written");
  CHECK(slurp(tmp.path + "/d/b.bin") == bytes);

  // Written: binary content, mode kept, hard link broken, symlink kept.
  agent.write({{tmp.path + "/d/a.py", std::string("y\0\n", 3), util::sha256_hex("x\n")},
               {tmp.path + "/d/link", "via link", util::sha256_hex(bytes)},
               {tmp.path + "/d/new/c.py", "c", ""}});
  CHECK(slurp(tmp.path + "/d/a.py") == std::string("y\0\n", 3));
  CHECK(slurp(tmp.path + "/cache/a.py") == "x\n");
  struct stat st;
  REQUIRE(::stat((tmp.path + "/d/a.py").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  CHECK(st.st_nlink == 1);
  REQUIRE(::lstat((tmp.path + "/d/link").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(slurp(tmp.path + "/d/b.bin") == "via link");
  CHECK(slurp(tmp.path + "/d/new/c.py") == "c");

  agent.remove({tmp.path + "/d/a.py", tmp.path + "/d/never"});
  CHECK(::access((tmp.path + "/d/a.py").c_str(), F_OK) != 0);

  // A bad request gets an error reply, and the agent keeps serving.
  REQUIRE_THROWS_WITH(agent.call({{"op", "bogus"}}), "unknown op 'bogus'");
  CHECK(agent.compile({{"x.py", "def f(:\n"}})[0].line == 1);
}

TEST_CASE("agent: its lock excludes a local lock, and is released on request", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  auto local = host::make_local_host();
  std::string path = tmp.path + "/state/lock";
  std::string held = "another sitepatch is working on this environment (lock " + path + " held); try again later";

  auto lock = agent.lock(path, 1000, host::LockMode::exclusive);
  agent.list(tmp.path);  // the lock is posted: the next request's answer confirms it
  REQUIRE_THROWS_WITH(local->lock(path, 100), held);
  lock.reset();  // posted as well; answered before the next request's answer
  agent.list(tmp.path);
  auto mine = local->lock(path, 100);
  auto refused = agent.lock(path, 100, host::LockMode::exclusive);
  REQUIRE_THROWS_WITH(agent.list(tmp.path), held);
}

TEST_CASE("agent: a lock is answered with the next request, and refused it fails every later one and nothing is written",
          "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  auto local = host::make_local_host();
  std::string path = tmp.path + "/state/sitepatch.lock", file = tmp.path + "/state/file";
  std::string held = "another sitepatch is working on this environment (lock " + path + " held); try again later";

  SECTION("held: one wait for the lock and the request after it") {
    host::AgentClient agent(host::agent_argv(venv.python), venv.python);
    agent.hello();
    int before = agent.round_trips();
    auto lock = agent.lock(path, 1000, host::LockMode::exclusive);
    CHECK(agent.round_trips() == before);
    CHECK(agent.list(tmp.path + "/state").size() == 1);
    CHECK(agent.round_trips() == before + 1);
    agent.write({{file, "mine\n", "", tmp.path + "/state"}});
    CHECK(slurp(file) == "mine\n");
  }
  SECTION("refused: a write right after it is not even sent") {
    auto theirs = local->lock(path, 100);
    host::AgentClient agent(host::agent_argv(venv.python), venv.python);
    auto lock = agent.lock(path, 100, host::LockMode::exclusive);
    REQUIRE(lock != nullptr);
    REQUIRE_THROWS_WITH(agent.write({{file, "mine\n", "", tmp.path + "/state"}}), held);
    CHECK_FALSE(std::filesystem::exists(file));
    REQUIRE_THROWS_WITH(agent.remove({path}), held);
    CHECK(std::filesystem::exists(path));
    REQUIRE_THROWS_WITH(agent.list(tmp.path), held);
  }
  SECTION("refused: the read after it throws the refusal, and so does every request after that") {
    auto theirs = local->lock(path, 100);
    host::AgentClient agent(host::agent_argv(venv.python), venv.python);
    auto lock = agent.lock(path, 100, host::LockMode::exclusive);
    REQUIRE_THROWS_WITH(agent.read({path}), held);
    REQUIRE_THROWS_WITH(agent.write({{file, "mine\n", "", tmp.path + "/state"}}), held);
    CHECK_FALSE(std::filesystem::exists(file));
  }
  SECTION("confirm: waits for the lock's answer when no request follows it") {
    host::AgentClient free_agent(host::agent_argv(venv.python), venv.python);
    free_agent.hello();
    int before = free_agent.round_trips();
    auto mine = free_agent.lock(path, 1000, host::LockMode::shared);
    free_agent.confirm();
    CHECK(free_agent.round_trips() == before + 1);
    free_agent.confirm();  // nothing left to wait for
    CHECK(free_agent.round_trips() == before + 1);
    auto theirs = local->lock(tmp.path + "/state/other.lock", 100);
    host::AgentClient agent(host::agent_argv(venv.python), venv.python);
    auto refused = agent.lock(tmp.path + "/state/other.lock", 100, host::LockMode::shared);
    REQUIRE_THROWS_WITH(agent.confirm(), "another sitepatch is working on this environment (lock " + tmp.path +
                                             "/state/other.lock held); try again later");
  }
  SECTION("released: the unlock is not waited for, and the agent's exit releases it as well") {
    host::AgentClient agent(host::agent_argv(venv.python), venv.python);
    auto lock = agent.lock(path, 1000, host::LockMode::exclusive);
    agent.list(tmp.path);
    int before = agent.round_trips();
    lock.reset();
    CHECK(agent.round_trips() == before);
    agent.finish();
    auto mine = local->lock(path, 2000);  // waits for the agent to read its last requests
    CHECK(mine != nullptr);
  }
}

TEST_CASE("agent: what is read ahead comes in the next wait, answers once, and a write makes it stale",
          "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string d = tmp.path + "/d", a = d + "/a.py", b = d + "/b.py", c = tmp.path + "/c.py";
  spit(a, "a1\n");
  spit(b, "b1\n");
  spit(c, "c1\n");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  agent.hello();

  SECTION("read ahead: the next request's wait brings it, and the read itself costs none") {
    int before = agent.round_trips();
    agent.prefetch({{a, b}, {d}, {}});
    CHECK(agent.round_trips() == before);
    auto r = agent.read({c});
    CHECK(r[0].content == "c1\n");
    CHECK(agent.round_trips() == before + 1);
    spit(a, "a2\n");  // after the wait: the answer is what was there when it was read
    auto ab = agent.read({b, a, b});
    REQUIRE(ab.size() == 3);
    CHECK(ab[0].content == "b1\n");
    CHECK(ab[1].content == "a1\n");
    CHECK(ab[2].content == "b1\n");
    auto listed = agent.list_many({d});
    REQUIRE(listed[0].size() == 2);
    CHECK(agent.round_trips() == before + 1);
    agent.prefetch({{}, {}, {a, tmp.path + "/nope"}});
    auto real = agent.realpath({tmp.path + "/nope", a});
    CHECK_FALSE(real[0]);
    CHECK(real[1].value() == a);
    CHECK(agent.round_trips() == before + 2);  // nothing else asked: its own wait
    // Once: the next read asks again, and sees the change.
    CHECK(agent.read({a})[0].content == "a2\n");
    CHECK(agent.round_trips() == before + 3);
  }
  SECTION("a read of what is read ahead and more: one wait for both") {
    agent.prefetch({{a}, {}, {}});
    int before = agent.round_trips();
    auto r = agent.read({a, c});
    CHECK(r[0].content == "a1\n");
    CHECK(r[1].content == "c1\n");
    CHECK(agent.round_trips() == before + 1);
  }
  SECTION("nothing else asked: the read waits for its own answer") {
    agent.prefetch({{a}, {d}, {}});
    int before = agent.round_trips();
    CHECK(agent.read({a})[0].content == "a1\n");
    CHECK(agent.round_trips() == before + 1);
    CHECK(agent.list_many({d})[0].size() == 2);
    CHECK(agent.round_trips() == before + 1);
  }
  SECTION("a write or remove drops what was read ahead of the file and of its folder") {
    agent.prefetch({{a, b, c}, {d, tmp.path}, {d + "/new.py", d}});
    agent.write({{a, "a3\n", util::sha256_hex("a1\n"), ""}});
    spit(b, "b2\n");
    CHECK(agent.read({a})[0].content == "a3\n");
    CHECK(agent.read({b})[0].content == "b1\n");  // not written: the answer read ahead
    agent.write({{d + "/new.py", "", "", ""}});
    CHECK(agent.list_many({d})[0].size() == 3);
    int before = agent.round_trips();
    auto real = agent.realpath({d + "/new.py", d});
    CHECK(real[0].value() == d + "/new.py");  // asked again: it did not exist when read ahead
    CHECK(real[1].value() == d);
    CHECK(agent.round_trips() == before + 1);
    agent.remove({c});
    CHECK_FALSE(agent.read({c})[0].exists);
    CHECK(agent.list_many({tmp.path}).size() == 1);
  }
  SECTION("a write that makes a folder drops the listings of every folder above it") {
    agent.prefetch({{}, {tmp.path, d}, {d + "/sub"}});
    agent.write({{d + "/sub/x.py", "", "", ""}});
    auto lists = agent.list_many({d, tmp.path});
    CHECK(lists[0].size() == 3);  // a.py, b.py and the new sub
    CHECK(agent.realpath({d + "/sub"})[0].value() == d + "/sub");
  }
  SECTION("a read ahead that fails is asked again, and fails with its own message") {
    // Reading a process's own memory at offset 0 fails with EIO, even for root.
    std::string bad = "/proc/self/mem";
    agent.prefetch({{a, bad}, {}, {}});
    int before = agent.round_trips();
    CHECK(agent.read({a})[0].content == "a1\n");  // the batch failed: a is asked again
    CHECK(agent.round_trips() == before + 2);       // the failed answer's wait, then a's
    REQUIRE_THROWS_WITH(agent.read({bad}), Catch::StartsWith("/proc/self/mem: "));
  }
}

TEST_CASE("agent: EOF on stdin ends it with status 0", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  auto r = util::run(host::agent_argv(venv.python), "{\"op\":\"hello\",\"protocol\":1}\n");
  CHECK(r.status == 0);
  CHECK(r.out.find("\"ok\":true") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("agent: write refuses a folder outside `within`, puts back on a failed rename", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  std::string site = tmp.path + "/site";
  spit(site + "/pkg/a.py", "a = 1\n");
  spit(tmp.path + "/outside/b.py", "b = 1\n");
  std::filesystem::create_directory_symlink(tmp.path + "/outside", site + "/evil");
  REQUIRE_THROWS_WITH(agent.write({{site + "/pkg/a.py", "a = 2\n", util::sha256_hex("a = 1\n"), site},
                                   {site + "/evil/b.py", "b = 2\n", util::sha256_hex("b = 1\n"), site}}),
                      "refusing to write " + site + "/evil/b.py: its folder is " + tmp.path +
                          "/outside, outside " + site + " (a symbolic link leads out); nothing was written");
  CHECK(slurp(site + "/pkg/a.py") == "a = 1\n");
  CHECK(slurp(tmp.path + "/outside/b.py") == "b = 1\n");

  std::string c = site + "/pkg/c.py";
  spit(c, "c = 1\n");
  REQUIRE(util::run({"chattr", "+i", c}).status == 0);
  std::string what;
  try {
    agent.write({{site + "/pkg/a.py", "a = 2\n", util::sha256_hex("a = 1\n"), site},
                 {c, "c = 2\n", util::sha256_hex("c = 1\n"), site}});
  } catch (const Error& e) {
    what = e.what();
  }
  util::run({"chattr", "-i", c});
  CHECK(what == c + ": cannot replace: Operation not permitted; nothing was written "
                    "(the 1 file(s) replaced before it were put back)");
  CHECK(slurp(site + "/pkg/a.py") == "a = 1\n");
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(site + "/pkg")) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a.py", "c.py"});
}

TEST_CASE("agent: a symlinked lock is refused, readers share the lock", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  std::string victim = tmp.path + "/victim";
  spit(victim, "precious\n");
  std::filesystem::create_directory(tmp.path + "/state");
  std::filesystem::create_symlink(victim, tmp.path + "/state/sitepatch.lock");
  auto refused = agent.lock(tmp.path + "/state/sitepatch.lock", 100, host::LockMode::exclusive);
  REQUIRE_THROWS_WITH(agent.list(tmp.path), tmp.path + "/state/sitepatch.lock is a symbolic link (to " + victim +
                                                "); sitepatch never opens its lock through a link: remove it");
  CHECK(slurp(victim) == "precious\n");

  // A refused lock fails the client for good: the rest on a new one.
  host::AgentClient reader_agent(host::agent_argv(venv.python), venv.python);
  auto none = reader_agent.lock(tmp.path + "/none/sitepatch.lock", 100, host::LockMode::shared);
  CHECK(reader_agent.list(tmp.path).size() == 3);  // holds nothing, made nothing: no /none
  std::string path = tmp.path + "/ok/sitepatch.lock";
  std::filesystem::create_directory(tmp.path + "/ok");
  auto local = host::make_local_host();
  auto reader = local->lock(path, 100, host::LockMode::shared);
  auto shared = reader_agent.lock(path, 100, host::LockMode::shared);
  reader_agent.list(tmp.path);
  REQUIRE_THROWS_WITH(local->lock(path, 100), "another sitepatch is working on this environment (lock " + path +
                                                  " held); try again later");
}

TEST_CASE("agent: read_lines keeps the same lines as the local host", "[host]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  agent.hello();
  // A RECORD without its last newline, a CRLF row, and a folder: as read() reports them.
  testsupport::spit(tmp.path + "/RECORD", "a/x.py,h,1\r\nb/y.py,h,2\n./a/x.py,h,3\nc/z.py,h,4");
  std::vector<std::string> paths = {tmp.path + "/RECORD", tmp.path, tmp.path + "/nope"};
  auto remote = agent.read_lines(paths, {"x.py", "z.py"});
  auto local = host::make_local_host()->read_lines(paths, {"x.py", "z.py"});
  REQUIRE(remote.size() == 3);
  CHECK(remote[0].content == "a/x.py,h,1\r\n./a/x.py,h,3\nc/z.py,h,4\n");
  CHECK(remote[0].content == local[0].content);
  CHECK(remote[1].is_dir);
  CHECK_FALSE(remote[2].exists);
}

TEST_CASE("agent: stat reports what the local host reports, reading nothing", "[host]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  agent.hello();
  testsupport::spit(tmp.path + "/a.py", "x = 1\n");
  std::vector<std::string> paths = {tmp.path + "/a.py", tmp.path, tmp.path + "/nope", tmp.path + "/a.py/under"};
  auto remote = agent.stat(paths);
  auto local = host::make_local_host()->stat(paths);
  REQUIRE(remote.size() == 4);
  REQUIRE(local.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    INFO(paths[i]);
    CHECK(remote[i].path == paths[i]);
    CHECK(remote[i].exists == local[i].exists);
    CHECK(remote[i].is_file == local[i].is_file);
    CHECK(remote[i].size == local[i].size);
    CHECK(remote[i].mtime_ns == local[i].mtime_ns);
  }
  CHECK(remote[0].size == 6);
  CHECK(remote[0].mtime_ns > 0);
  CHECK_FALSE(remote[1].is_file);
  CHECK_FALSE(remote[2].exists);
  CHECK_FALSE(remote[3].exists);
}

namespace {

// XDG_CACHE_HOME for the agents this test starts (they inherit the environment).
struct CacheHome {
  std::string old;
  bool had;
  explicit CacheHome(const std::string& dir) : had(std::getenv("XDG_CACHE_HOME") != nullptr) {
    if (had) old = std::getenv("XDG_CACHE_HOME");
    ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~CacheHome() { had ? (void)::setenv("XDG_CACHE_HOME", old.c_str(), 1) : (void)::unsetenv("XDG_CACHE_HOME"); }
};

}  // namespace

TEST_CASE("agent: runs from its compiled code kept per user, never from a folder others may change", "[host]") {
  TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  CacheHome home(tmp.path + "/cache");
  auto start = [&] {
    host::AgentClient agent(host::agent_boot_argv(venv.python), venv.python, host::agent_boot_payload());
    auto env = agent.hello();
    CHECK(env.site_dirs == std::vector<std::string>{venv.site_packages});  // the cache's folder is not one
    CHECK(agent.read({tmp.path + "/venv/pyvenv.cfg"})[0].exists);
  };
  start();
  std::string agents = tmp.path + "/cache/sitepatch/agent";
  REQUIRE(std::filesystem::is_directory(agents));
  std::string dir = std::filesystem::directory_iterator(agents)->path().string();
  std::string digest = dir.substr(dir.rfind('/') + 1);
  std::string code;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".bin") code = e.path().string();
  REQUIRE(!code.empty());
  CHECK(slurp(code).rfind(digest + " cpython-", 0) == 0);  // the digest, the cache tag, then marshal
  struct stat st;
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat(code.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::string kept = slurp(code);

  // Bytes that are not the agent's code are compiled again and replaced.
  spit(code, "garbage");
  start();
  CHECK(slurp(code) == kept);

  // A folder others may write to is not read, nor written: the sent source runs instead.
  spit(code, "garbage");
  REQUIRE(::chmod(dir.c_str(), 0777) == 0);
  start();
  CHECK(slurp(code) == "garbage");
}

namespace {

// What a search answered, as text both hosts must agree on.
std::string shown(const std::vector<std::vector<host::EntryHit>>& answers) {
  std::string out;
  auto files = [](const std::vector<host::FileData>& fs) {
    std::string s;
    for (auto& f : fs) s += "[" + std::string(f.exists ? "+" : "-") + (f.is_dir ? "d" : "") + f.content + "]";
    return s;
  };
  for (size_t q = 0; q < answers.size(); ++q)
    for (auto& h : answers[q])
      out += std::to_string(q) + ":" + std::to_string(h.dir) + ":" + h.name + (h.is_dir ? "/" : "") + " lists" +
             files(h.lists) + " heads" + files(h.heads) + " wholes" + files(h.wholes) + "\n";
  return out;
}

}  // namespace

TEST_CASE("agent: search answers what the local host answers, and only the hits", "[host]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  host::AgentClient agent(host::agent_argv(venv.python), venv.python);
  agent.hello();
  std::string site = tmp.path + "/site", other = tmp.path + "/other";
  spit(site + "/a-1.0.dist-info/RECORD", "pkg/x.py,sha256=1,1\npkg/y.py,sha256=2,2\n");
  spit(site + "/a-1.0.dist-info/METADATA", "Name: a\nVersion: 1.0\n\nbody Name: not a header\n");
  spit(site + "/B_Two-2.0.dist-info/RECORD", "two/z.py,,\n");
  spit(site + "/B_Two-2.0.dist-info/METADATA", "Name: b-two\r\nVersion: 2.0\r\n\r\nbody\r\n");
  spit(site + "/c-1.0.egg-info", "Name: c\nVersion: 1.0\n");  // a bare PKG-INFO
  spit(site + "/d.egg-info/installed-files.txt", "../pkg/x.py\n");
  spit(site + "/d.egg-info/top_level.txt", "pkg\n");
  spit(site + "/e-1.0.dist-info", "a file, not a folder\n");
  spit(site + "/notes.txt", "pkg/x.py\n");
  spit(other + "/f-3.dist-info/RECORD", "pkg/x.py,,\n");
  host::EntryQuery owners;
  owners.dirs = {site, tmp.path + "/nope", other};
  owners.patterns = {"*.dist-info", "*.egg-info"};
  owners.lists = {"RECORD", "installed-files.txt", ""};
  owners.needles = {"x.py"};
  owners.heads = {"METADATA", ""};
  owners.wholes = {"top_level.txt"};
  host::EntryQuery named;  // by name, any case, no needles: every match, lists looked up
  named.dirs = {site};
  named.patterns = {"b[-_.]two-*.dist-info"};
  named.lists = {"RECORD", "SOURCES.txt"};
  named.heads = {"METADATA"};
  host::EntryQuery every = owners;  // an empty needle holds every line
  every.dirs = {site};
  every.needles = {""};
  every.heads.clear();
  auto remote = agent.search({owners, named, every});
  auto local = host::make_local_host()->search({owners, named, every});
  CHECK(shown(remote) == shown(local));
  CHECK(shown(remote) ==
        "0:0:a-1.0.dist-info/ lists[+pkg/x.py,sha256=1,1\n][-][+d] heads[+Name: a\nVersion: 1.0\n\n][+d] wholes[-]\n"
        "0:0:d.egg-info/ lists[-][+../pkg/x.py\n][+d] heads[-][+d] wholes[+pkg\n]\n"
        "0:2:f-3.dist-info/ lists[+pkg/x.py,,\n][-][+d] heads[-][+d] wholes[-]\n"
        "1:0:B_Two-2.0.dist-info/ lists[+][-] heads[+Name: b-two\r\nVersion: 2.0\r\n\r\n] wholes\n"
        "2:0:B_Two-2.0.dist-info/ lists[+two/z.py,,\n][-][+d] heads wholes[-]\n"
        "2:0:a-1.0.dist-info/ lists[+pkg/x.py,sha256=1,1\npkg/y.py,sha256=2,2\n][-][+d] heads wholes[-]\n"
        "2:0:c-1.0.egg-info lists[-][-][+Name: c\nVersion: 1.0\n] heads wholes[-]\n"
        "2:0:d.egg-info/ lists[-][+../pkg/x.py\n][+d] heads wholes[+pkg\n]\n"
        "2:0:e-1.0.dist-info lists[-][-][+a file, not a folder\n] heads wholes[-]\n");
}

namespace {
// The agent (its parts joined by the build, as the binary carries it) as an importable
// module in `tmp`, and the lines that import it as `a` from the folder given as argv[1]:
// for checks run by a chosen interpreter.
constexpr const char* kImportAgent = "import sys\nsys.path.insert(0, sys.argv[1])\nimport sitepatch_agent as a\n";
void put_agent_module(const TempDir& tmp) { spit(tmp.path + "/sitepatch_agent.py", slurp(SITEPATCH_AGENT_SOURCE)); }
}  // namespace

// The agent does without json, base64, fnmatch and hashlib to start faster (agent/start.py's
// imports): its own codec, matcher and hash must agree with those modules on the oldest
// and the newest Python it supports, and its start must not import `re`.
TEST_CASE("agent: its JSON, base64, sha256 and name patterns agree with the standard library on 3.8 and 3.13",
          "[host]") {
  TempDir tmp;
  put_agent_module(tmp);
  const std::string check = std::string(kImportAgent) + R"PY(
assert "re" not in sys.modules and "json" not in sys.modules and "hashlib" not in sys.modules, "slow imports"
assert a._scan is not None and a._encode is not None, "no _json accelerator"
import base64, fnmatch, hashlib, json, random
rnd = random.Random(7)
def value(depth):
    k = rnd.randrange(8 if depth < 3 else 5)
    if k == 0: return None
    if k == 1: return rnd.random() < 0.5
    if k == 2: return rnd.randint(-2**40, 2**40)
    if k == 3: return rnd.uniform(-1e6, 1e6)
    if k == 4: return "".join(rnd.choice('ab"\\\n\t\u00e9\u20ac\U0001F600\udcff/') for _ in range(rnd.randrange(6)))
    if k == 5: return [value(depth + 1) for _ in range(rnd.randrange(4))]
    return {value(4) if False else str(rnd.randrange(99)): value(depth + 1) for _ in range(rnd.randrange(4))}
for _ in range(3000):
    v = value(0)
    text = a.dumps(v)
    assert text == json.dumps(v, separators=(",", ":")), (v, text)
    assert a.loads(text) == v and a.loads(" %s\n" % json.dumps(v, indent=1)) == v, v
for bad in ["", "{", '{"a":1} x', "[1,]", "nul", '"\\x"']:
    try:
        a.loads(bad)
    except ValueError:
        continue
    raise AssertionError("accepted %r" % bad)
for _ in range(300):
    data = bytes(rnd.randrange(256) for _ in range(rnd.randrange(200)))
    assert a.b64(data) == base64.b64encode(data).decode() and a.unb64(a.b64(data)) == data
    assert a.sha256_hex(data) == hashlib.sha256(data).hexdigest()
checked = 0
for p in ["*.dist-info", "torch-*.dist-info", "foo[-_.]bar-*.dist-info", "*-*.json", "*.egg-link", "[!a]*", "x[", "[]]", "[a-]"]:
    for n in ["foo_bar-1.0.dist-info", "foo-bar-1.dist-info", "foo.bar-x.dist-info", "foobar-1.dist-info",
              "torch-2.9.0.dist-info", "torch.pth", "numpy-1.26-py311.json", "x.egg-link", "abc", "x[", "]", "-", "a"]:
        assert a.glob_match(n, a.glob_tokens(p)) == fnmatch.fnmatchcase(n, p), (p, n)
for _ in range(20000):
    p = "".join(rnd.choice("ab*?[]!-.") for _ in range(rnd.randrange(7)))
    n = "".join(rnd.choice("ab-]![.") for _ in range(rnd.randrange(7)))
    try:
        want = fnmatch.fnmatchcase(n, p)
    except Exception:  # 3.8's fnmatch rejects a reversed range; newer ones match nothing
        continue
    checked += 1
    assert a.glob_match(n, a.glob_tokens(p)) == want, (p, n)
print("agreed", checked)
)PY";
  for (std::string minor : {"3.8", "3.13"}) {
    DYNAMIC_SECTION("Python " << minor) {
      auto r = util::run({testsupport::pyenv_python(minor), "-c", check, tmp.path});
      INFO(r.err);
      CHECK(r.status == 0);
      CHECK(r.out.rfind("agreed ", 0) == 0);
    }
  }
}

// The agent expands the install scheme's paths itself (agent/site.py's install_paths) rather
// than have sysconfig load the build's configuration at every start: they must be the
// paths sysconfig gives, for every Python here, bare and in a venv, Debian's included.
TEST_CASE("agent: its install paths are sysconfig's, without loading the build's configuration, on 3.8 to 3.13",
          "[host]") {
  TempDir tmp;
  put_agent_module(tmp);
  const std::string check = std::string(kImportAgent) + R"PY(
before = set(m for m in sys.modules if m.startswith("_sysconfigdata"))
mine = a.install_paths()
assert set(m for m in sys.modules if m.startswith("_sysconfigdata")) == before, "loaded the configuration"
import sysconfig
real = sysconfig.get_paths()
for k in ("purelib", "platlib", "stdlib", "platstdlib"):
    assert mine[k] == real[k], (k, mine[k], real[k])
print("same", mine["purelib"])
)PY";
  std::vector<std::string> pythons = {"/usr/bin/python3"};
  for (std::string minor : {"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"}) pythons.push_back(testsupport::pyenv_python(minor));
  for (size_t i = 0; i < pythons.size(); ++i) {
    DYNAMIC_SECTION(pythons[i]) {
      std::string venv = tmp.path + "/venv" + std::to_string(i);
      REQUIRE(util::run({pythons[i], "-m", "venv", "--without-pip", venv}).status == 0);
      for (const std::string& python : {pythons[i], venv + "/bin/python3"}) {
        auto r = util::run({python, "-c", check, tmp.path});
        INFO(python << "\n" << r.err);
        CHECK(r.status == 0);
        CHECK(r.out.rfind("same ", 0) == 0);
      }
    }
  }
}

// The boot payload names the agent by its sha256 (the remote keeps a copy under that
// name); the digest is computed by the build, and must be the digest of what is sent.
TEST_CASE("agent: the boot payload names the agent's source by its own sha256", "[host]") {
  std::string source = slurp(SITEPATCH_AGENT_SOURCE);
  std::string payload = host::agent_boot_payload();
  REQUIRE(payload.size() > source.size());
  CHECK(payload.compare(payload.size() - source.size(), source.size(), source) == 0);
  std::string head = payload.substr(0, payload.size() - source.size());
  REQUIRE(head.size() > 1);
  head.pop_back();  // its '\n'
  head = head.substr(head.rfind('\n') + 1);
  CHECK(head == util::sha256_hex(source).substr(0, 32) + " " + std::to_string(source.size()));
}

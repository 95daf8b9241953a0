// The private folders commands work in: a killed command's are taken back by the next
// one; nothing else is removed (a live maker's, another user's, a link).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "sitepatch/util/temp_folder.hpp"
#include "support/fixture.hpp"

namespace fs = std::filesystem;

namespace {

struct TmpdirIs {
  std::string was;
  bool had;
  explicit TmpdirIs(const std::string& dir) {
    const char* v = std::getenv("TMPDIR");
    had = v != nullptr;
    if (had) was = v;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpdirIs() {
    if (had) ::setenv("TMPDIR", was.c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
};

}  // namespace

TEST_CASE("make_temp_folder: in TMPDIR, private, and a killed maker's folders are taken back", "[unit][util]") {
  testsupport::TempDir tmp;
  TmpdirIs env(tmp.path + "/");
  // A process that made its folder and was killed before it could remove it.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::string dir = sitepatch::util::make_temp_folder("run");
    testsupport::spit(dir + "/sitecustomize.py", "x = 1\n");
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  std::string left;
  for (auto& e : fs::directory_iterator(tmp.path)) left = e.path().string();
  REQUIRE(left.find(tmp.path + "/sitepatch-run-" + std::to_string(child) + "-") == 0);

  // What must stay: a live process's folder (ours), another kind's, another user's and a link.
  std::string live = tmp.path + "/sitepatch-run-" + std::to_string(::getpid()) + "-keepme";
  fs::create_directory(live);
  ::chmod(live.c_str(), 0700);
  std::string other_kind = tmp.path + "/sitepatch-history-" + std::to_string(child) + "-abcdef";
  fs::create_directory(other_kind);
  ::chmod(other_kind.c_str(), 0700);
  std::string theirs = tmp.path + "/sitepatch-run-" + std::to_string(child) + "-theirs";
  fs::create_directory(theirs);
  ::chmod(theirs.c_str(), 0700);
  REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
  std::string target = tmp.path + "/target";
  fs::create_directory(target);
  testsupport::spit(target + "/keep", "mine\n");
  std::string link = tmp.path + "/sitepatch-run-" + std::to_string(child) + "-link";
  fs::create_directory_symlink(target, link);

  std::string made = sitepatch::util::make_temp_folder("run");
  CHECK(made.find(tmp.path + "/sitepatch-run-" + std::to_string(::getpid()) + "-") == 0);
  struct stat st {};
  REQUIRE(::stat(made.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(!fs::exists(left));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other_kind));
  CHECK(fs::exists(theirs));
  CHECK(fs::is_symlink(link));
  CHECK(testsupport::slurp(target + "/keep") == "mine\n");
  fs::remove_all(made);
}

TEST_CASE("make_temp_folder takes back a killed maker's folder in a sticky folder such as /tmp itself",
          "[unit][util][root]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TempDir tmp;
  std::string shared = tmp.path + "/tmp";
  fs::create_directory(shared);
  ::chmod(shared.c_str(), 01777);
  TmpdirIs env(shared);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    sitepatch::util::make_temp_folder("history");
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  std::string prefix = shared + "/sitepatch-history-" + std::to_string(child) + "-";
  std::string left;
  for (auto& e : fs::directory_iterator(shared)) left = e.path().string();
  REQUIRE(left.find(prefix) == 0);
  // Another user's folder of the same name form, and a link, stay where they are.
  std::string theirs = prefix + "theirs";
  fs::create_directory(theirs);
  ::chmod(theirs.c_str(), 0700);
  REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
  std::string link = prefix + "link";
  fs::create_directory_symlink(tmp.path, link);

  std::string made = sitepatch::util::make_temp_folder("history");
  CHECK(!fs::exists(left));
  CHECK(fs::exists(theirs));
  CHECK(fs::is_symlink(link));
  fs::remove_all(made);
}

TEST_CASE("make_run_folder: in the caller's cache, never in TMPDIR, and refused where another user could make it",
          "[unit][util][root]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TempDir tmp;
  TmpdirIs env(tmp.path + "/tmpdir");
  fs::create_directory(tmp.path + "/tmpdir");
  std::string cache = tmp.path + "/cache";
  ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  std::string made = sitepatch::util::make_run_folder();
  CHECK(made.find(cache + "/sitepatch/run/sitepatch-run-" + std::to_string(::getpid()) + "-") == 0);
  CHECK(fs::is_empty(tmp.path + "/tmpdir"));
  struct stat st {};
  REQUIRE(::stat((cache + "/sitepatch/run").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  fs::remove_all(made);
  // The folder it lies in is another user's: they could make the name again once it is gone.
  std::string theirs = tmp.path + "/theirs";
  fs::create_directories(theirs + "/sitepatch/run");
  REQUIRE(::chown((theirs + "/sitepatch").c_str(), 65534, 65534) == 0);
  ::setenv("XDG_CACHE_HOME", theirs.c_str(), 1);
  try {
    sitepatch::util::make_run_folder();
    FAIL("made a run folder in another user's folder");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()) == "refusing to run the command with its files in " + theirs + "/sitepatch/run: " +
                                       theirs + "/sitepatch belongs to uid 65534, another user; set XDG_CACHE_HOME to "
                                       "a folder only you can change");
  }
  CHECK(fs::is_empty(theirs + "/sitepatch/run"));
  ::unsetenv("XDG_CACHE_HOME");
}

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

// What another user can change on a path (util::unsafe_path), and the reads and names
// that keep a root sitepatch from being steered: files read by type and size first,
// text from files escaped before it is printed, temps told apart by their writer's tag.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "host/local_files.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"
#include "support/fixture.hpp"

namespace fs = std::filesystem;
using sitepatch::util::unsafe_path;

namespace {
void mode(const std::string& p, mode_t m) { REQUIRE(::chmod(p.c_str(), m) == 0); }
void owner(const std::string& p, uid_t uid) { REQUIRE(::lchown(p.c_str(), uid, uid) == 0); }
}  // namespace

TEST_CASE("unsafe_path: folders only root and the caller can change are safe", "[util][root]") {
  testsupport::TempDir tmp;
  fs::create_directories(tmp.path + "/a/b");
  CHECK_FALSE(unsafe_path(tmp.path + "/a/b"));
  CHECK_FALSE(unsafe_path(tmp.path + "/a/b/missing/too"));  // judged by where it would be made
  CHECK_FALSE(unsafe_path("/usr/lib"));
  // /tmp is writable by everyone but sticky: its entries the caller owns stay theirs.
  CHECK_FALSE(unsafe_path(tmp.path));
}

TEST_CASE("unsafe_path names the first folder another user owns or may write to", "[util][root]") {
  REQUIRE(::geteuid() == 0);  // it makes files of another user
  testsupport::TempDir tmp;
  fs::create_directories(tmp.path + "/a/b/c");
  owner(tmp.path + "/a/b", 65534);
  CHECK(unsafe_path(tmp.path + "/a/b/c") == tmp.path + "/a/b belongs to uid 65534, another user");
  owner(tmp.path + "/a/b", 0);
  mode(tmp.path + "/a", 0777);  // not sticky: anyone may rename b away and put a link there
  CHECK(unsafe_path(tmp.path + "/a/b/c") == tmp.path + "/a is writable by other users (mode 0777)");
  mode(tmp.path + "/a", 01777);  // sticky: b stays root's
  CHECK_FALSE(unsafe_path(tmp.path + "/a/b/c"));
  // The folder itself may not be writable by others even when sticky.
  CHECK(unsafe_path(tmp.path + "/a") == tmp.path + "/a is writable by other users (mode 1777)");
  mode(tmp.path + "/a", 0775);
  REQUIRE(::chown((tmp.path + "/a").c_str(), 0, 65534) == 0);
  CHECK(unsafe_path(tmp.path + "/a/b") == tmp.path + "/a is writable by its group 65534 (mode 0775)");
  REQUIRE(::chown((tmp.path + "/a").c_str(), 0, 0) == 0);  // root's group is root
  CHECK_FALSE(unsafe_path(tmp.path + "/a/b"));
}

TEST_CASE("unsafe_path follows links, judging the folder each lies in and where it leads", "[util][root]") {
  testsupport::TempDir tmp;
  fs::create_directories(tmp.path + "/theirs/real");
  fs::create_directories(tmp.path + "/mine");
  fs::create_directory_symlink(tmp.path + "/theirs/real", tmp.path + "/mine/link");
  CHECK_FALSE(unsafe_path(tmp.path + "/mine/link"));
  owner(tmp.path + "/theirs", 65534);
  CHECK(unsafe_path(tmp.path + "/mine/link") == tmp.path + "/theirs belongs to uid 65534, another user");
  // A link another user owns, in a sticky folder, is theirs to point anywhere.
  fs::create_directory(tmp.path + "/sticky");
  mode(tmp.path + "/sticky", 01777);
  fs::create_directory_symlink(tmp.path + "/mine", tmp.path + "/sticky/l");
  owner(tmp.path + "/sticky/l", 65534);
  CHECK(unsafe_path(tmp.path + "/sticky/l/x") == tmp.path + "/sticky/l belongs to uid 65534, another user");
  // Relative links and `..` resolve where the kernel would.
  fs::create_directory_symlink("../mine", tmp.path + "/mine/up");
  CHECK_FALSE(unsafe_path(tmp.path + "/mine/up/up/up"));
  fs::create_directory_symlink("loop", tmp.path + "/mine/loop");
  CHECK(unsafe_path(tmp.path + "/mine/loop/x") == tmp.path + "/mine/loop: too many levels of symbolic links");
}

TEST_CASE("make_safe_folder makes what is missing, private, and judges what someone else made", "[util][root]") {
  testsupport::TempDir tmp;
  std::string dir = tmp.path + "/shared/sitepatch/remote/x";
  fs::create_directory(tmp.path + "/shared");
  mode(tmp.path + "/shared", 01777);
  CHECK_FALSE(sitepatch::util::make_safe_folder(dir));
  struct stat st {};
  REQUIRE(::stat((tmp.path + "/shared/sitepatch").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  fs::remove_all(tmp.path + "/shared/sitepatch");
  // Another user made the first folder before us.
  fs::create_directory(tmp.path + "/shared/sitepatch");
  owner(tmp.path + "/shared/sitepatch", 65534);
  CHECK(sitepatch::util::make_safe_folder(dir) ==
        tmp.path + "/shared/sitepatch belongs to uid 65534, another user");
  CHECK(fs::is_empty(tmp.path + "/shared/sitepatch"));
}

TEST_CASE("read_file refuses a FIFO, a device and a file over the cap before reading", "[util]") {
  testsupport::TempDir tmp;
  std::string fifo = tmp.path + "/fifo.py";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  auto r = sitepatch::util::read_file(fifo);  // opening a FIFO with no writer must not wait
  REQUIRE(!r);
  CHECK(r.error() == fifo + ": not a regular file (a FIFO); sitepatch reads only regular files");
  r = sitepatch::util::read_file("/dev/zero");
  REQUIRE(!r);
  CHECK(r.error() == "/dev/zero: not a regular file (a character device); sitepatch reads only regular files");
  std::string big = tmp.path + "/big.py";
  testsupport::spit(big, "");
  REQUIRE(::truncate(big.c_str(), (off_t(64) << 20) + 1) == 0);
  r = sitepatch::util::read_file(big);
  REQUIRE(!r);
  CHECK(r.error() == big + ": too large (65 MB; sitepatch reads files of at most 64 MB)");
  testsupport::spit(big, "x = 1\n");
  CHECK(sitepatch::util::read_file(big).value() == "x = 1\n");
  // A file the user names may be a pipe (`<(cmd)`): that one is read, waiting for its writer.
  std::thread writer([&] { testsupport::spit(fifo, "id: x\n"); });
  auto named = sitepatch::util::read_named_file(fifo);
  writer.join();
  CHECK(named.value() == "id: x\n");
}

TEST_CASE("printable escapes what a terminal would act on, and bytes that are not UTF-8", "[util]") {
  using sitepatch::util::printable;
  CHECK(printable("plain caf\xC3\xA9 \xE2\x82\xAC") == "plain caf\xC3\xA9 \xE2\x82\xAC");
  CHECK(printable("a\x1b]0;title\x07z") == "a\\x1b]0;title\\x07z");
  CHECK(printable(std::string("n\0x\n", 4)) == "n\\x00x\\x0a");
  CHECK(printable("\xC2\x9B" "31m") == "\\xc2\\x9b31m");  // C1 CSI
  CHECK(printable("\xE9t\xE9") == "\\xe9t\\xe9");
}

TEST_CASE("a writer's lock names its temps' tag, and only temps with a listed tag are its", "[host]") {
  using namespace sitepatch::host;
  std::string text = lock_text(42, "abcd1234", {"zzzz0000"});
  CHECK(text == "42 abcd1234\nzzzz0000\n");
  CHECK(lock_tags(text) == std::vector<std::string>{"abcd1234", "zzzz0000"});
  CHECK(lock_tags("42\n").empty());                           // a lock file from before tags
  CHECK(lock_tags("42 ../../x\nNOT-A-TAG\n").empty());
  CHECK(left_by(".m.py.sitepatch-abcd1234q1w2e3r4t5y6.tmp", {"abcd1234"}));
  CHECK(left_by(".m.py.sitepatch-zzzz0000q1w2e3r4t5y6.orig", {"abcd1234", "zzzz0000"}));
  CHECK_FALSE(left_by(".m.py.sitepatch-abc123.tmp", {"abcd1234"}));  // a user's own file
  CHECK_FALSE(left_by(".m.py.sitepatch-abcd1234q1w2e3r4t5y6.tmp", {}));
  CHECK_FALSE(left_by("m.py", {"abcd1234"}));
}

TEST_CASE("a killed writer's tag stays in the lock for the next writer, a released one's does not", "[host]") {
  testsupport::TempDir tmp;
  auto host = sitepatch::host::make_local_host();
  std::string path = tmp.path + "/state/sitepatch.lock";
  fs::create_directory(tmp.path + "/state");
  testsupport::spit(path, "999999 deadbeef\n");  // what a killed writer left
  {
    auto lock = host->lock(path, 100);
    CHECK(lock->unfinished() == std::vector<std::string>{"deadbeef"});
    std::string now = testsupport::slurp(path);
    CHECK(now.rfind(std::to_string(::getpid()) + " ", 0) == 0);
    CHECK(now.find("\ndeadbeef\n") != std::string::npos);  // until this writer is done
  }
  CHECK(testsupport::slurp(path).empty());
  auto next = host->lock(path, 100);
  CHECK(next->unfinished().empty());
}

TEST_CASE("unsafe_path sees write another user gets through a POSIX ACL, the mode's mask allowing it",
          "[util][root]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TempDir tmp;
  std::string dir = tmp.path + "/site-packages";
  fs::create_directories(dir + "/pkg");
  // `ls -l` shows drwxrwxr-x+ with group root: the mode alone says nobody else writes.
  REQUIRE(sitepatch::util::run({"setfacl", "-m", "u:65534:rwx", dir}).status == 0);
  CHECK(unsafe_path(dir + "/pkg") == dir + " is writable by uid 65534 through a POSIX ACL (see getfacl " + dir + ")");
  CHECK(unsafe_path(dir) == dir + " is writable by uid 65534 through a POSIX ACL (see getfacl " + dir + ")");
  // A mask without write takes it from every named entry, as the kernel does.
  REQUIRE(sitepatch::util::run({"setfacl", "-m", "m::r-x", dir}).status == 0);
  CHECK_FALSE(unsafe_path(dir + "/pkg"));
  REQUIRE(sitepatch::util::run({"setfacl", "-b", dir}).status == 0);
  // A group entry, and a default ACL that gives what is made in the folder to another user.
  REQUIRE(sitepatch::util::run({"setfacl", "-m", "g:65534:rwx", dir}).status == 0);
  CHECK(unsafe_path(dir) == dir + " is writable by group 65534 through a POSIX ACL (see getfacl " + dir + ")");
  REQUIRE(sitepatch::util::run({"setfacl", "-b", "-d", "-m", "u:65534:rwx", dir}).status == 0);
  CHECK(unsafe_path(dir) == dir + " lets uid 65534 write what is made in it, through a default POSIX ACL (see getfacl " +
                                dir + ")");
  CHECK_FALSE(unsafe_path(dir + "/pkg"));  // only the folder things are made in counts for that
  // Entries for root and the caller are no one else's.
  REQUIRE(sitepatch::util::run({"setfacl", "-b", "-m", "u:0:rwx,g:0:rwx", dir}).status == 0);
  CHECK_FALSE(unsafe_path(dir + "/pkg"));
}

TEST_CASE("unsafe_path judges the last name when it is a file: its mode, owner and ACL", "[util][root]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TempDir tmp;
  std::string file = tmp.path + "/bin/python3";
  testsupport::spit(file, "#!/bin/sh\n");
  mode(file, 0755);
  CHECK_FALSE(unsafe_path(file));
  mode(file, 0777);
  CHECK(unsafe_path(file) == file + " is writable by other users (mode 0777)");
  mode(file, 0775);
  REQUIRE(::chown(file.c_str(), 0, 65534) == 0);
  CHECK(unsafe_path(file) == file + " is writable by its group 65534 (mode 0775)");
  REQUIRE(::chown(file.c_str(), 0, 0) == 0);
  CHECK_FALSE(unsafe_path(file));
  REQUIRE(sitepatch::util::run({"setfacl", "-m", "u:65534:rw", file}).status == 0);
  CHECK(unsafe_path(file) == file + " is writable by uid 65534 through a POSIX ACL (see getfacl " + file + ")");
  // Through a link: the file it leads to is what is judged.
  fs::create_symlink(file, tmp.path + "/link");
  CHECK(unsafe_path(tmp.path + "/link") == file + " is writable by uid 65534 through a POSIX ACL (see getfacl " + file + ")");
}

#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <cerrno>

#include "sitepatch/util/process.hpp"

using sitepatch::util::Process;

namespace {
// Reaped (the destructor waited for it): no such process any more.
bool gone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }
}  // namespace

TEST_CASE("process: the destructor reaps a child that ends at EOF, and kills one that does not", "[util]") {
  int pid;
  {
    Process p({"cat"});
    p.write("x\n");
    std::string line;
    REQUIRE(p.read_line(line));
    CHECK(line == "x");
    pid = p.pid();
  }
  CHECK(gone(pid));
  {
    // Ignores EOF: only the kill after the grace period ends it.
    Process p({"sh", "-c", "exec sleep 30 </dev/null"});
    pid = p.pid();
  }
  CHECK(gone(pid));
  {
    Process p({"true"});
    pid = p.pid();
    CHECK(p.wait() == 0);
  }
  CHECK(gone(pid));
}

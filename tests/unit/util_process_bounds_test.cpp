// What a child sends is held within bounds: a line that never ends, or a flood of
// stderr, cannot grow this process's memory (issue 41, finding 5).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

using sitepatch::util::Process;

namespace {
constexpr size_t kMB = size_t(1) << 20;
}  // namespace

TEST_CASE("process: a line of 100 MB without a newline is refused at the bound, its bytes not kept", "[util]") {
  // The child keeps running after the 100 MB: nothing but the bound stops the read.
  Process p({"sh", "-c", "head -c 100000000 /dev/zero; exec sleep 30"});
  std::string line;
  size_t peak = 0;
  try {
    p.read_line(line);
    FAIL("read_line returned a line of " << line.size() << " bytes");
  } catch (const sitepatch::Error& e) {
    CHECK(std::string(e.what()) == "a line longer than 16 MB");
    peak = p.held();
  }
  CHECK(peak == 0);
  CHECK(line.empty());
  // A bound of the caller's own.
  Process q({"sh", "-c", "printf 'short\\n'; head -c 5000 /dev/zero; exec sleep 30"});
  REQUIRE(q.read_line(line, 1000));
  CHECK(line == "short");
  CHECK_THROWS_WITH(q.read_line(line, 1000), "a line longer than 1000 bytes");
}

TEST_CASE("process: a line just under the bound, and many short ones, read whole", "[util]") {
  // 16 MB less one byte, then 200,000 lines of one byte: each byte is searched once.
  Process p({"sh", "-c",
             "head -c 16777215 /dev/zero | tr '\\0' x; echo; yes a | head -n 200000; printf 'last'"});
  std::string line;
  REQUIRE(p.read_line(line));
  CHECK(line.size() == 16 * kMB - 1);
  CHECK(line.find_first_not_of('x') == std::string::npos);
  size_t n = 0, most = 0;
  while (p.read_line(line) && line == "a") {
    ++n;
    most = std::max(most, p.held());
  }
  CHECK(n == 200000);
  CHECK(most < 16 * kMB + 65536);
  CHECK(line == "last");
  CHECK_FALSE(p.read_line(line));
}

TEST_CASE("process: a flood of stderr keeps its first and last 2 MB and says how much was left out", "[util]") {
  // 100 MB on stderr (its first byte an 'A', its last a 'Z'), then one line on stdout.
  Process p({"sh", "-c", "{ printf A; head -c 99999998 /dev/zero | tr '\\0' y; printf Z; } >&2; echo done"});
  std::string line;
  REQUIRE(p.read_line(line));
  CHECK(line == "done");
  CHECK(p.wait() == 0);
  CHECK(p.held() <= 3 * Process::kStderrKept);
  std::string err = p.stderr_text();
  size_t left_out = 100000000 - 2 * Process::kStderrKept;
  std::string note = "\n[" + std::to_string(left_out) + " bytes of stderr left out]\n";
  CHECK(err.size() == 2 * Process::kStderrKept + note.size());
  CHECK(err.substr(Process::kStderrKept, note.size()) == note);
  CHECK(err.front() == 'A');
  CHECK(err.back() == 'Z');
  CHECK(p.held() <= 2 * Process::kStderrKept + line.size() + 1);
}

TEST_CASE("process: a write to a child that floods stderr before it reads finishes", "[util]") {
  // The child blocks on its full stderr pipe until someone reads it; the write of 1 MB
  // blocks on the child's full stdin unless it reads stderr meanwhile.
  Process p({"sh", "-c", "head -c 10000000 /dev/zero >&2; wc -c"});
  p.write(std::string(kMB, 'x'));
  p.close_input();
  std::string line;
  REQUIRE(p.read_line(line));
  CHECK(sitepatch::util::trim(line) == "1048576");
}

TEST_CASE("process: run feeds input and reads both outputs whole, without a deadlock", "[util]") {
  // 4 MB through cat while 10 MB go to stderr: neither pipe's filling stalls the other,
  // and run's caller holds what it asked for, all of it (a test reads sitepatch's stderr).
  auto r = sitepatch::util::run({"sh", "-c", "head -c 10000000 /dev/zero >&2; cat"}, std::string(4 * kMB, 'q'));
  CHECK(r.status == 0);
  CHECK(r.out == std::string(4 * kMB, 'q'));
  CHECK(r.err.size() == 10000000);
  // A last line without '\n' comes back without one.
  CHECK(sitepatch::util::run({"printf", "a\\nb"}).out == "a\nb");
}

TEST_CASE("printable_lines: escapes as printable does but keeps newlines and tabs", "[util]") {
  using sitepatch::util::printable_lines;
  CHECK(printable_lines("one\n\x1b]0;title\x07two\r\n") == "one\n\\x1b]0;title\\x07two\\x0d\n");
  CHECK(printable_lines("\xc2\x9b" "31m caf\xc3\xa9") == "\\xc2\\x9b31m caf\xc3\xa9");
  CHECK(printable_lines("") == "");
  CHECK(printable_lines("\n\n\ta\tb") == "\n\n\ta\tb");
}

// merge3: undoing one recipe's edits while keeping another's (libgit2 git_merge_file).
#include <catch2/catch.hpp>

#include "sitepatch/store/history.hpp"

using sitepatch::store::merge3;

namespace {

// A module with two functions far apart, so edits to each are independent hunks.
std::string module(const std::string& f_body, const std::string& g_body) {
  std::string s = "import os\n\n\ndef f():\n    " + f_body + "\n\n\n";
  for (int i = 0; i < 12; ++i) s += "CONSTANT_" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  s += "\n\ndef g():\n    " + g_body + "\n";
  return s;
}

}  // namespace

TEST_CASE("merge3 undoes one recipe's edit and keeps another's", "[store]") {
  const std::string original = module("return os.popen('nvcc --version').read()", "return 1");
  const std::string after_a = module("return '12.4'", "return 1");         // recipe A
  const std::string now = module("return '12.4'", "return 2");             // then recipe B
  // Given base = right after A, ours = now, theirs = before A: B stays, A goes.
  auto r = merge3(after_a, now, original, "pkg/cuda.py");
  CHECK(r.clean);
  CHECK(r.content == module("return os.popen('nvcc --version').read()", "return 2"));
}

TEST_CASE("merge3 reports a conflict when both touched the same line", "[store]") {
  const std::string original = module("return 0", "return 1");
  const std::string after_a = module("return 10", "return 1");
  const std::string now = module("return 20", "return 1");  // B rewrote A's line
  auto r = merge3(after_a, now, original, "pkg/cuda.py");
  CHECK_FALSE(r.clean);
  CHECK(r.content.find("<<<<<<< ours") != std::string::npos);
  CHECK(r.content.find("return 20") != std::string::npos);
  CHECK(r.content.find("return 0") != std::string::npos);
  CHECK(r.content.find(">>>>>>> theirs") != std::string::npos);
}

TEST_CASE("merge3 trivial cases, binary content included", "[store]") {
  // The file is as A left it: undo gives the original exactly.
  auto r = merge3("a\nB\nc", "a\nB\nc", "a\nb\nc", "m.py");
  CHECK(r.clean);
  CHECK(r.content == "a\nb\nc");
  const std::string bin_orig("\0orig", 5), bin_a("\0patched", 8), bin_b("\0other", 6);
  r = merge3(bin_a, bin_a, bin_orig, "x.bin");
  CHECK(r.clean);
  CHECK(r.content == bin_orig);
  // Binary content changed by someone else: a conflict that keeps the current bytes.
  r = merge3(bin_a, bin_b, bin_orig, "x.bin");
  CHECK_FALSE(r.clean);
  CHECK(r.content == bin_b);
}

TEST_CASE("merge3 keeps CRLF and a missing final newline", "[store]") {
  auto crlf = [](const std::string& mid) {
    std::string s = "top\r\n";
    for (int i = 0; i < 8; ++i) s += "x" + std::to_string(i) + "\r\n";
    return s + mid + "\r\nend";
  };
  std::string original = "first\r\n" + crlf("mid");
  std::string after_a = "FIRST\r\n" + crlf("mid");
  std::string now = "FIRST\r\n" + crlf("MID");
  auto r = merge3(after_a, now, original, "m.py");
  CHECK(r.clean);
  CHECK(r.content == "first\r\n" + crlf("MID"));
}

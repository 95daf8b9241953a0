// Hints: the shipped set loads and says what the founding story's operations are; a
// fix hint fits only the code it was written for; a user's file adds or replaces by
// id, and every problem of a malformed one is reported with its position.
#include <catch2/catch.hpp>

#include "sitepatch/explain/hints.hpp"
#include "sitepatch/util/error.hpp"

using namespace sitepatch::explain;

namespace {

std::string hint_error_of(const std::string& text) {
  try {
    parse_hints(text, "h.yaml");
  } catch (const sitepatch::Error& e) {
    CHECK(e.code() == sitepatch::Exit::usage);
    return e.what();
  }
  return "";
}

const char* const kNvcc =
    "def get_cuda_version() -> Version:\n"
    "    txt = subprocess.check_output([nvcc, \"--version\"], text=True)\n";

}  // namespace

TEST_CASE("the shipped hints say what dynamo's refused operations are", "[explain]") {
  HintSet hints;
  hints.add(builtin_hints());
  CHECK(hints.meaning("_thread.allocate_lock") ==
        "creates a lock (threading.Lock); subprocess.Popen makes one for every process it starts");
  CHECK(hints.meaning("posix.stat").rfind("reads file-system metadata (os.stat)", 0) == 0);
  CHECK(hints.meaning("math.sqrt") == "");
}

TEST_CASE("a fix hint fits a function that makes its call and holds its words", "[explain]") {
  HintSet hints;
  hints.add(builtin_hints());
  FunctionText f{kNvcc, "Version", {"subprocess.check_output"}};
  const Hint* h = hints.fix_for(f);
  REQUIRE(h);
  CHECK(h->id == "cuda-version-from-torch");
  CHECK(body_for(*h, f) == "return Version(torch.version.cuda)\n");
  CHECK(h->ensure_import == "import torch");
  // Another process, no annotation for {returns}, or no such call: the default fix.
  CHECK_FALSE(hints.fix_for({"def f():\n    subprocess.run(['ls'])\n", "str", {"subprocess.run"}}));
  CHECK_FALSE(hints.fix_for({kNvcc, "", {"subprocess.check_output"}}));
  CHECK_FALSE(hints.fix_for({kNvcc, "Version", {"os.path.exists"}}));
}

TEST_CASE("a user's hints file adds hints and replaces a shipped one by id", "[explain]") {
  HintSet hints;
  hints.add(builtin_hints());
  size_t shipped = hints.all().size();
  hints.add(parse_hints("hints:\n"
                        "  - id: posix-stat\n"
                        "    operation: posix.stat\n"
                        "    means: checks the kernel cache\n"
                        "  - id: mine\n"
                        "    operation: posix.*\n"
                        "    means: a system call\n",
                        "h.yaml"));
  CHECK(hints.all().size() == shipped + 1);
  CHECK(hints.meaning("posix.stat") == "checks the kernel cache");
  CHECK(hints.meaning("posix.getpid") == "a system call");
  CHECK(hints.all().back().origin == "h.yaml");
}

TEST_CASE("a malformed hints file reports every problem with its position", "[explain]") {
  CHECK(hint_error_of("hints:\n"
                 "  - id: a\n"
                 "    operation: posix.stat\n"
                 "  - id: a\n"
                 "    calls: subprocess.*\n"
                 "    replace-body: return 1\n"
                 "    holds: nvcc\n"
                 "  - means: x\n"
                 "    operation: y\n"
                 "  - id: b\n") ==
        "invalid hints file\n"
        "h.yaml:2:5: hint 1: `operation` and `means` go together\n"
        "h.yaml:4:9: hint 2: id `a` is used by an earlier hint of this file\n"
        "h.yaml:7:12: hint 2: `holds` must be a list of words\n"
        "h.yaml:8:5: hint 3: missing required key `id`\n"
        "h.yaml:10:5: hint 4: says nothing: give `operation` and `means`, or `calls` and `replace-body`");
  CHECK(hint_error_of("rules: []\n") == "invalid hints file\nh.yaml:1:1: a hints file is a mapping with a `hints:` list");
}

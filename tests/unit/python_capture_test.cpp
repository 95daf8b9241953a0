// capture: hand edits of each shape become the smallest named edit, checked by
// applying them to pip's text; what no named edit can make is reported by line.
#include <catch2/catch.hpp>

#include "unit/capture_support.hpp"

using namespace pytest;
using sitepatch::python::capture;

namespace {

const std::string kPip =
    "\"\"\"CUDA helpers.\"\"\"\n"
    "import subprocess\n"
    "\n"
    "TIMEOUT = 30\n"
    "\n"
    "\n"
    "def get_cuda_version():\n"
    "    \"\"\"nvcc's version.\"\"\"\n"
    "    out = subprocess.check_output([\"nvcc\", \"--version\"])\n"
    "    return out.decode().split()[-1]\n"
    "\n"
    "\n"
    "def fp4_quantize(x):\n"
    "    return x\n"
    "\n"
    "\n"
    "class Loader:\n"
    "    def load(self, name):\n"
    "        text = '''first\n"
    "  second'''\n"
    "        return name + text\n"
    "\n"
    "    def close(self):\n"
    "        pass\n"
    "\n"
    "\n"
    "print('loaded')\n";

void check_round_trip(const std::string& edited, const sitepatch::python::Capture& c) {
  check_round_trip_of(kPip, edited, c);
}

}  // namespace

TEST_CASE("capture: a replaced body is replace-body, the docstring kept", "[python][capture]") {
  std::string edited = with(kPip,
                            "    out = subprocess.check_output([\"nvcc\", \"--version\"])\n"
                            "    return out.decode().split()[-1]\n",
                            "    return str(torch.version.cuda)\n");
  auto c = capture(kPip, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace_body);
  CHECK(c.edits[0].target == "get_cuda_version");
  CHECK(c.edits[0].code == "return str(torch.version.cuda)\n");
  check_round_trip(edited, c);
}

TEST_CASE("capture: lines put at the top of a body are prepend-body", "[python][capture]") {
  std::string edited = with(kPip, "def fp4_quantize(x):\n", "def fp4_quantize(x):\n    x = x + 0\n");
  auto c = capture(kPip, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::prepend_body);
  CHECK(c.edits[0].code == "x = x + 0\n");
  check_round_trip(edited, c);
}

TEST_CASE("capture: a decorator typed in is add-decorator, outermost or innermost, and a removed one remove-decorator",
          "[python][capture]") {
  std::string edited = with(kPip, "def fp4_quantize(x):\n", "@torch.compiler.disable\ndef fp4_quantize(x):\n");
  auto c = capture(kPip, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::add_decorator);
  CHECK(c.edits[0].code == "torch.compiler.disable");
  CHECK_FALSE(c.edits[0].innermost);
  check_round_trip(edited, c);

  std::string cached = with(kPip, "def fp4_quantize(x):\n", "@functools.cache\ndef fp4_quantize(x):\n");
  std::string both = with(cached, "def fp4_quantize(x):\n", "@torch.compiler.assume_constant_result\ndef fp4_quantize(x):\n");
  auto inner = capture(cached, both);
  REQUIRE(inner.edits.size() == 1);
  CHECK(inner.edits[0].innermost);
  auto removed = capture(cached, kPip);
  REQUIRE(removed.edits.size() == 1);
  CHECK(removed.edits[0].action == Action::remove_decorator);
  CHECK(removed.edits[0].code == "functools.cache");
  CHECK(removed.exact);
}

TEST_CASE("capture: a changed constant is set-value, a new helper insert-after, a new import ensure-import",
          "[python][capture]") {
  std::string edited = with(kPip, "TIMEOUT = 30\n", "TIMEOUT = 300\n");
  auto value = capture(kPip, edited);
  REQUIRE(value.edits.size() == 1);
  CHECK(value.edits[0].action == Action::set_value);
  CHECK(value.edits[0].kind == TargetKind::variable);
  CHECK(value.edits[0].target == "TIMEOUT");
  CHECK(value.edits[0].code == "300");
  check_round_trip(edited, value);

  std::string helper = with(kPip, "\n\ndef fp4_quantize(x):\n",
                            "\n\ndef _cuda_from_torch():\n    return torch.version.cuda\n\n\ndef fp4_quantize(x):\n");
  helper = with(helper, "import subprocess\n", "import subprocess\nimport torch\n");
  auto added = capture(kPip, helper);
  REQUIRE(added.edits.size() == 2);
  CHECK(added.edits[0].action == Action::none);
  CHECK(added.edits[0].ensure_import == "import torch");
  CHECK(added.edits[1].action == Action::insert_after);
  CHECK(added.edits[1].target == "get_cuda_version");
  CHECK(added.edits[1].code == "def _cuda_from_torch():\n    return torch.version.cuda\n");
  check_round_trip(helper, added);
}

TEST_CASE("capture: a method's body and a new method inside a class, string literals kept byte for byte",
          "[python][capture]") {
  std::string edited = with(kPip, "        text = '''first\n", "        text = '''FIRST\n");
  edited = with(edited, "        return name + text\n", "        return text\n");
  edited = with(edited, "    def close(self):\n        pass\n",
                "    def close(self):\n        pass\n\n    def reopen(self):\n        return self\n");
  auto c = capture(kPip, edited);
  REQUIRE(c.edits.size() == 2);
  CHECK(c.edits[0].target == "Loader.load");
  CHECK(c.edits[0].action == Action::replace_body);
  // The literal's second line starts in the string: not dedented.
  CHECK(c.edits[0].code == "text = '''FIRST\n  second'''\nreturn text\n");
  CHECK(c.edits[1].target == "Loader.close");
  CHECK(c.edits[1].action == Action::insert_after);
  check_round_trip(edited, c);
}

TEST_CASE("capture: a changed signature is replace-function", "[python][capture]") {
  std::string edited = with(kPip, "def fp4_quantize(x):\n    return x\n", "def fp4_quantize(x, scale=1):\n    return x * scale\n");
  auto c = capture(kPip, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace_function);
  CHECK(c.edits[0].code == "def fp4_quantize(x, scale=1):\n    return x * scale\n");
  check_round_trip(edited, c);
}

TEST_CASE("capture: a change outside any definition is a replace with no target, trimmed", "[python][capture]") {
  std::string edited = with(kPip, "print('loaded')\n", "print('loaded, patched')\n");
  edited = with(edited, "TIMEOUT = 30\n", "TIMEOUT = 60\n");
  auto c = capture(kPip, edited);
  REQUIRE(c.edits.size() == 2);
  CHECK(c.edits[0].action == Action::set_value);
  CHECK(c.edits[1].action == Action::replace);
  CHECK(c.edits[1].target.empty());
  CHECK(c.edits[1].old_text == "print('loaded')");
  CHECK(c.edits[1].new_text == "print('loaded, patched')");
  check_round_trip(edited, c);

  // A statement removed: its lines go, with the blank lines that were its.
  std::string gone_text = with(kPip, "\n\nprint('loaded')\n", "");
  auto gone = capture(kPip, gone_text);
  REQUIRE(gone.edits.size() == 1);
  CHECK(gone.edits[0].target.empty());
  check_round_trip(gone_text, gone);

  // A line added after the imports: the import taken along, so the old text is found.
  std::string added = with(kPip, "import subprocess\n", "import subprocess\nsubprocess.DEVNULL  # warm\n");
  auto a = capture(kPip, added);
  REQUIRE(a.edits.size() == 1);
  CHECK(a.edits[0].old_text == "import subprocess");
  CHECK(a.edits[0].new_text == "import subprocess\nsubprocess.DEVNULL  # warm");
  check_round_trip(added, a);

  // A line added at the end, right after a changed definition: there is no text below,
  // and the text above is the definition's edit: left out, by line.
  std::string pip = "def f():\n    return 1\n";
  std::string end = "def f():\n    return 2\nprint(f())\n";
  auto e = capture(pip, end);
  CHECK_FALSE(e.exact);
  REQUIRE(e.outside.size() == 1);
  CHECK(e.outside[0].new_first == 3);
  REQUIRE(e.edits.size() == 1);
  CHECK(e.edits[0].target == "f");
}

TEST_CASE("capture: a change no nearby text finds once is reported by line and left out", "[python][capture]") {
  std::string pip;
  for (int i = 0; i < 20; ++i) pip += "print(1)\n";
  std::string edited = with(pip, "print(1)\nprint(1)\n", "print(1)\nprint(2)\n");
  auto c = capture(pip, edited);
  CHECK_FALSE(c.exact);
  CHECK(c.edits.empty());
  REQUIRE(c.outside.size() == 1);
  CHECK(c.outside[0].old_first == 2);
  CHECK(c.outside[0].new_first == 2);
  CHECK(c.outside[0].new_last == 2);
  CHECK(c.outside[0].text == "print(2)\n");
}

TEST_CASE("capture: an import put beside another is an ensure-import, the decorator add-decorator",
          "[python][capture]") {
  std::string pip =
      "import contextlib\n"
      "import os\n"
      "\n"
      "\n"
      "def probe():\n"
      "    return os.getcwd()\n";
  std::string edited = with(pip, "import contextlib\n", "import contextlib\nimport functools\n");
  edited = with(edited, "def probe", "@functools.lru_cache(maxsize=None)\ndef probe");
  auto c = capture(pip, edited);
  REQUIRE(c.exact);
  CHECK(c.outside.empty());
  REQUIRE(c.edits.size() == 2);
  CHECK(c.edits[0].ensure_import == "import functools");
  CHECK(c.edits[0].action == Action::none);
  CHECK(c.edits[1].action == Action::add_decorator);
  CHECK(c.edits[1].code == "functools.lru_cache(maxsize=None)");
  REQUIRE(c.moved.size() == 1);
  CHECK(c.moved[0].import == "import functools");
  CHECK(c.moved[0].edited_line == 2);
  CHECK(c.moved[0].recipe_line == 3);
  // In a module with no imports, above a def with the two blank lines a person leaves:
  // the same edits, the blank lines said.
  std::string bare = "def probe():\n    return 1\n";
  auto b = capture(bare, "import functools\n\n\n@functools.cache\ndef probe():\n    return 1\n");
  REQUIRE(b.exact);
  REQUIRE(b.edits.size() == 2);
  CHECK(b.edits[1].action == Action::add_decorator);
  REQUIRE(b.moved.size() == 1);
  CHECK(b.moved[0].edited_line == 1);
  CHECK(b.moved[0].recipe_line == 1);
  // Where ensure-import puts it anyway: nothing moved.
  std::string last = with(pip, "import os\n", "import os\nimport functools\n");
  auto d = capture(pip, last);
  CHECK(d.moved.empty());
  check_round_trip_of(pip, last, d);
}

TEST_CASE("capture: CRLF files and the same text", "[python][capture]") {
  auto same = capture(kPip, kPip);
  CHECK(same.exact);
  CHECK(same.edits.empty());
  std::string crlf;
  for (char ch : kPip) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  std::string edited = with(crlf, "def fp4_quantize(x):\r\n", "@torch.compiler.disable\r\ndef fp4_quantize(x):\r\n");
  auto c = capture(crlf, edited);
  REQUIRE(c.exact);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::add_decorator);
}

TEST_CASE("capture --whole-file: a file with a change no edit can name is one replace-module",
          "[python][capture]") {
  std::string pip;
  for (int i = 0; i < 20; ++i) pip += "print(1)\n";
  std::string edited = with(pip, "print(1)\nprint(1)\n", "print(1)\nprint(2)\n");
  auto c = capture(pip, edited, "m.py", true);
  REQUIRE(c.exact);
  CHECK(c.outside.empty());
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace_module);
  CHECK(c.edits[0].target.empty());
  check_round_trip_of(pip, edited, c);
  // A file the named edits reproduce keeps them.
  auto named = capture(kPip, with(kPip, "TIMEOUT = 30\n", "TIMEOUT = 1\n"), "m.py", true);
  REQUIRE(named.edits.size() == 1);
  CHECK(named.edits[0].action == Action::set_value);
}

TEST_CASE("capture: a name defined twice gets its whole definition, or nothing, never an edit that fails",
          "[python][capture]") {
  // A property's getter and setter share a name: `Box.size` is ambiguous to an edit.
  std::string pip =
      "class Box:\n"
      "    @property\n"
      "    def size(self):\n"
      "        return self._size\n"
      "\n"
      "    @size.setter\n"
      "    def size(self, v):\n"
      "        self._size = v\n";
  std::string edited = with(pip, "        self._size = v\n", "        self._size = max(v, 0)\n");
  auto c = capture(pip, edited);
  REQUIRE(c.exact);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace_function);
  CHECK(c.edits[0].target == "Box");
  check_round_trip_of(pip, edited, c);
  // With a change outside any definition too: the edits found still apply.
  std::string both = edited + "\nprint('x')\n";
  auto d = capture(pip, both);
  REQUIRE(d.outside.size() == 1);
  Run r = run(pip, d.edits);
  for (auto& res : r.results) CHECK(res.outcome != sitepatch::python::Outcome::failed);
}

TEST_CASE("capture: a few lines of a longer body are replace old -> new, lines only added an insert-after",
          "[python][capture]") {
  std::string pip = "def f(x):\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c + x\n";
  std::string changed = with(pip, "    b = 2\n", "    b = 20\n");
  auto one = capture(pip, changed);
  REQUIRE(one.edits.size() == 1);
  CHECK(one.edits[0].action == Action::replace);
  CHECK(one.edits[0].old_text == "b = 2");
  CHECK(one.edits[0].new_text == "b = 20");
  check_round_trip_of(pip, changed, one);
  std::string added = with(pip, "    b = 2\n", "    b = 2\n    b += 1\n");
  auto more = capture(pip, added);
  REQUIRE(more.edits.size() == 1);
  CHECK(more.edits[0].action == Action::insert_after);
  CHECK(more.edits[0].anchor == "b = 2");
  CHECK(more.edits[0].code == "b += 1\n");
  check_round_trip_of(pip, added, more);
  // The old lines found twice in the function: the line above taken along.
  std::string twice = "def g():\n    x = 1\n    y = 2\n    x = 1\n    return x + y\n";
  std::string changed_twice = with(twice, "    x = 1\n    return", "    x = 5\n    return");
  auto wider = capture(twice, changed_twice);
  REQUIRE(wider.edits.size() == 1);
  CHECK(wider.edits[0].action == Action::replace);
  CHECK(wider.edits[0].old_text == "y = 2\nx = 1");
  CHECK(wider.edits[0].new_text == "y = 2\nx = 5");
  check_round_trip_of(twice, changed_twice, wider);
  // Unique only with more than half the body along: the whole body instead.
  std::string most = "def h():\n    x = 1\n    x = 1\n    x = 1\n    return x\n";
  std::string changed_most = with(most, "    x = 1\n    return", "    x = 5\n    return");
  auto body = capture(most, changed_most);
  REQUIRE(body.edits.size() == 1);
  CHECK(body.edits[0].action == Action::replace_body);
  check_round_trip_of(most, changed_most, body);
}

TEST_CASE("capture: lines changed inside a method are written at column 0, each later line relative to the first",
          "[python][capture]") {
  std::string pip =
      "class Pool:\n"
      "    def get(self):\n"
      "        a = 1\n"
      "        conn = self._pool.get()\n"
      "        if a:\n"
      "            a = 2\n"
      "        return conn, a\n";
  std::string edited = with(pip, "        conn = self._pool.get()\n",
                            "        try:\n"
                            "            conn = self._pool.get(timeout=1)\n"
                            "        except Empty:\n"
                            "            conn = None\n");
  auto c = capture(pip, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace);
  CHECK(c.edits[0].target == "Pool.get");
  CHECK(c.edits[0].old_text == "conn = self._pool.get()");
  CHECK(c.edits[0].new_text == "try:\n    conn = self._pool.get(timeout=1)\nexcept Empty:\n    conn = None");
  check_round_trip_of(pip, edited, c);
  // Lines that end less indented than they begin keep the difference on the first line.
  std::string dedent = with(pip, "            a = 2\n        return conn, a\n", "            a = 3\n        return a, conn\n");
  auto d = capture(pip, dedent);
  REQUIRE(d.edits.size() == 1);
  CHECK(d.edits[0].action == Action::replace);
  CHECK(d.edits[0].old_text == "    a = 2\nreturn conn, a");
  CHECK(d.edits[0].new_text == "    a = 3\nreturn a, conn");
  check_round_trip_of(pip, dedent, d);
}

// edit_yaml: what sitepatch writes, parse reads back as the same edit, whatever the code.
#include <catch2/catch.hpp>

#include "sitepatch/recipe/recipe.hpp"

using namespace sitepatch::recipe;

namespace {

Edit read_back(const Edit& e) {
  std::string text = "id: t\nedits:\n" + edit_yaml(e);
  INFO(text);
  Recipe r = parse(text, "t.yaml");
  REQUIRE(r.edits.size() == 1);
  return r.edits[0];
}

}  // namespace

TEST_CASE("edit_yaml: code, decorators, values and imports read back byte for byte", "[recipe]") {
  std::vector<std::string> codes = {
      "return 1\n",
      "x = 1\n\n\nreturn x\n",                        // blank lines inside
      "s = '''a\n  b'''\nreturn s\n",                 // a literal's lines
      "  indented_first = 1\n",                       // a leading space: quoted
      "tab\tinside = 1\n",
      "trailing = 1   \nreturn trailing\n",
      "two_newlines = 1\n\n",                         // `|` would drop one: quoted
      "no_newline = 1",
      "# comment: with colon\nreturn {'a': [1, 2]}\n",
      "crlf = 1\r\nreturn crlf\r\n",
      "uni = 'é ✓'\n",
  };
  for (auto& code : codes) {
    Edit e;
    e.module = "pkg.mod";
    e.target = "f";
    e.action = Action::replace_body;
    e.code = code;
    CHECK(read_back(e).code == code);
  }
  for (std::string value : {"300", "True", "None", "'x'", "[1, 2]", "{'a': 1}", "a: b", "-1", "x  # not a comment",
                            "\"q\""}) {
    Edit e;
    e.module = "pkg.mod";
    e.kind = TargetKind::variable;
    e.target = "X";
    e.action = Action::set_value;
    e.code = value;
    CHECK(read_back(e).code == value);
  }
  Edit d;
  d.module = "pkg.mod";
  d.target = "C.m";
  d.kind = TargetKind::class_;
  d.action = Action::add_decorator;
  d.code = "functools.lru_cache(maxsize=None)";
  d.innermost = true;
  Edit back = read_back(d);
  CHECK(back.code == d.code);
  CHECK(back.innermost);
  CHECK(back.kind == TargetKind::class_);
  CHECK(back.target == "C.m");
  Edit imp;
  imp.file = "pkg/mod.py";
  imp.ensure_import = "from a.b import c as d";
  Edit ib = read_back(imp);
  CHECK(ib.ensure_import == imp.ensure_import);
  CHECK(ib.file == "pkg/mod.py");
  CHECK(ib.action == Action::none);
}

TEST_CASE("edit_yaml: replace's old and new read back byte for byte", "[recipe]") {
  for (auto [o, n] : std::vector<std::pair<std::string, std::string>>{
           {"    return x\n", "    return x * 2\n"}, {"a = 1\n", "a = 1\nb = 2\n"}, {"x", "y  \t"},
           {"b = 2", "b = 2\n    b += 1"}, {"print('a: b')", ""}, {"x = 1", "if c:\n    x = 1\n\n  # end"}}) {
    Edit e;
    e.module = "m";
    e.target = "f";
    e.action = Action::replace;
    e.old_text = o;
    e.new_text = n;
    Edit back = read_back(e);
    CHECK(back.action == Action::replace);
    CHECK(back.old_text == o);
    CHECK(back.new_text == n);
    CHECK(back.count == 1);
  }
  // Trimmed lines as a person writes them, with no target (the module's own lines):
  // plain, or a `|-` block.
  Edit e;
  e.module = "m";
  e.action = Action::replace;
  e.old_text = "b = 2";
  e.new_text = "b = 2\nb += 1";
  CHECK(edit_yaml(e) == "  - module: m\n    replace:\n      old: b = 2\n      new: |-\n        b = 2\n        b += 1\n");
  // A first line more indented than a later one (the lines cross a dedent) is quoted.
  e.old_text = "    return 1\nreturn 2";
  CHECK(read_back(e).old_text == e.old_text);
}

TEST_CASE("edit_yaml: an anchor reads back byte for byte, on one line or as a block", "[recipe]") {
  for (std::string anchor : {"timeout = Sauce(connect=timeout, read=timeout)", "if x:  # why", "d = {'a': 1}",
                             "r = call(\n    x,\n)", "s = '''a\n  b'''", "true"}) {
    Edit e;
    e.module = "m";
    e.target = "C.f";
    e.action = Action::insert_before;
    e.code = "y = 2\n";
    e.anchor = anchor;
    Edit back = read_back(e);
    CHECK(back.action == Action::insert_before);
    CHECK(back.anchor == anchor);
    CHECK(back.code == "y = 2\n");
  }
}

TEST_CASE("edit_yaml: which of several same-named definitions an edit means reads back", "[recipe]") {
  Edit e;
  e.module = "lib.utils";
  e.target = "register_custom_op";
  e.action = Action::replace_body;
  e.code = "return torch.library.custom_op(name, fn, mutates_args=mutates_args)\n";
  e.occurrence = 2;
  CHECK(edit_yaml(e).find("    occurrence: 2\n") != std::string::npos);
  Edit back = read_back(e);
  CHECK(back.occurrence == 2);
  CHECK(back.target == "register_custom_op");
  e.occurrence = 0;  // the only one: no field
  CHECK(edit_yaml(e).find("occurrence") == std::string::npos);
  CHECK(read_back(e).occurrence == 0);
}

TEST_CASE("yaml_comment: nothing in a comment starts a line of YAML", "[recipe]") {
  // Line breaks YAML 1.1 or 1.2 knows (LF, CR, NEL, LS, PS) and terminal escapes, escaped.
  CHECK(yaml_comment("a\nb\rc\x1b]52;c;x\x07") == "a\\x0ab\\x0dc\\x1b]52;c;x\\x07");
  CHECK(yaml_comment("n\xc2\x85l \xe2\x80\xa8 \xe2\x80\xa9 \xff") == "n\\xc2\\x85l \\u2028 \\u2029 \\xff");
  CHECK(yaml_comment("plain: text (é)") == "plain: text (é)");
}

TEST_CASE("check_written: a recipe that reads back as other edits than proposed is refused", "[recipe]") {
  Edit e;
  e.module = "pkg.mod";
  e.target = "f";
  e.action = Action::add_decorator;
  e.code = "torch.compiler.disable";
  std::string good = "id: t\nedits:\n" + edit_yaml(e);
  CHECK_NOTHROW(check_written(good, "t", {e}, "the recipe"));
  // An edit more (a name spliced raw), another id, another target: each refused.
  std::string more = good + "  - module: json\n    function: loads\n    replace-body: pass\n";
  auto message = [](const std::string& text, const std::string& id, const std::vector<Edit>& edits) {
    try {
      check_written(text, id, edits, "the recipe");
    } catch (const sitepatch::Error& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  const std::string nothing =
      "; nothing was written (a sitepatch bug, or a name in the input it cannot quote: please report it)";
  CHECK(message(more, "t", {e}) == "the recipe reads back as 2 edits, not the 1 proposed" + nothing);
  CHECK(message(good, "u", {e}) == "the recipe reads back with the id t, not u" + nothing);
  Edit other = e;
  other.target = "g";
  CHECK(message(good, "t", {other}) ==
        "the recipe: edit 1 reads back as pkg.mod:f, not as proposed (pkg.mod:g)" + nothing);
  CHECK(message("id: t\nedits: [", "t", {e}).rfind("the recipe does not read back as a recipe: ", 0) == 0);
}

// Edits of one file applied together: conflicts, failed edits left out, and the
// founding case (FlashInfer's get_cuda_version and fp4_quantize under torch.compile).
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

TEST_CASE("overlapping edits: the later one fails naming the other's target", "[python]") {
  std::string src =
      "def get_x():\n"
      "    return 1\n"
      "\n"
      "def other():\n"
      "    pass\n";
  Edit body = edit(Action::replace_body, "get_x", "return 2");
  Edit whole = edit(Action::replace_function, "get_x", "def get_x():\n    return 3\n");
  Edit ok = edit(Action::replace_body, "other", "return 0");
  Run r = run(src, {body, whole, ok});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[1].outcome == Outcome::failed);
  CHECK(r.results[1].failure == Failure::conflict);
  CHECK(r.results[1].message == "overlaps the edit of get_x (replace-body)");
  CHECK(r.results[1].line == 1);
  CHECK(r.results[2].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "def get_x():\n"
        "    return 2\n"
        "\n"
        "def other():\n"
        "    return 0\n");
}

TEST_CASE("an insertion inside another edit's range conflicts, one at its end does not", "[python]") {
  std::string src = "@a\ndef f():\n    return 1\n";
  Edit whole = edit(Action::replace_function, "f", "def f():\n    return 2\n");
  Edit inner = edit(Action::add_decorator, "f", "b");
  inner.innermost = true;
  Run r = run(src, {whole, inner});
  CHECK(r.results[1].failure == Failure::conflict);
  CHECK(r.results[1].message == "overlaps the edit of f (replace-function)");
  CHECK(r.out == "def f():\n    return 2\n");

  // Removing the decorator and adding one right above the def line touch different bytes.
  Edit removal = edit(Action::remove_decorator, "f", "a");
  r = run(src, {removal, inner});
  CHECK(r.results[1].outcome == Outcome::will_apply);
  CHECK(r.out == "@b\ndef f():\n    return 1\n");
}

TEST_CASE("a failed edit is left out and its import is not added", "[python]") {
  std::string src = "import os\n\ndef f():\n    pass\n";
  Edit bad = edit(Action::replace_body, "g", "return torch.ones(1)");
  bad.ensure_import = "import torch";
  Edit good = edit(Action::prepend_body, "f", "x = 1");
  Run r = run(src, {bad, good});
  CHECK(r.results[0].failure == Failure::not_found);
  CHECK(r.out == "import os\n\ndef f():\n    x = 1\n    pass\n");
}

TEST_CASE("an edit with nothing to do is refused", "[python]") {
  Run r = run("x = 1\n", {import_edit("")});
  CHECK(r.results[0].failure == Failure::invalid);
  CHECK(r.results[0].message == "nothing to do: no action and no ensure-import");
}

TEST_CASE("the FlashInfer case: no subprocess under dynamo, fp4_quantize not traced", "[python]") {
  std::string src =
      "import functools\n"
      "import subprocess\n"
      "\n"
      "from packaging.version import Version\n"
      "\n"
      "\n"
      "def get_cuda_version() -> Version:\n"
      "    \"\"\"The CUDA version nvcc reports.\"\"\"\n"
      "    out = subprocess.run([\"nvcc\", \"--version\"], capture_output=True, text=True)\n"
      "    release = out.stdout.split(\"release \")[1].split(\",\")[0]\n"
      "    return Version(release)\n"
      "\n"
      "\n"
      "@functools.cache\n"
      "def fp4_quantize(x, scale):\n"
      "    module = get_fp4_quantization_module()\n"
      "    return module.fp4_quantize(x, scale)\n";
  Edit version = edit(Action::replace_body, "get_cuda_version", "return Version(torch.version.cuda)\n");
  version.ensure_import = "import torch";
  Edit quant = edit(Action::add_decorator, "fp4_quantize", "torch.compiler.disable");
  quant.ensure_import = "import torch";
  std::vector<Edit> edits{version, quant};
  Run r = run(src, edits);
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 7);
  CHECK(r.results[1].outcome == Outcome::will_apply);
  CHECK(r.results[1].line == 15);
  CHECK(r.out ==
        "import functools\n"
        "import subprocess\n"
        "\n"
        "from packaging.version import Version\n"
        "import torch\n"
        "\n"
        "\n"
        "def get_cuda_version() -> Version:\n"
        "    \"\"\"The CUDA version nvcc reports.\"\"\"\n"
        "    return Version(torch.version.cuda)\n"
        "\n"
        "\n"
        "@torch.compiler.disable\n"
        "@functools.cache\n"
        "def fp4_quantize(x, scale):\n"
        "    module = get_fp4_quantization_module()\n"
        "    return module.fp4_quantize(x, scale)\n");
  CHECK(Module(r.out).syntax_problems().empty());
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("many edits over a large module stay fast", "[python]") {
  std::string src = "import os\n";
  std::vector<Edit> edits;
  for (int i = 0; i < 2000; ++i) {
    src += "\ndef f" + std::to_string(i) + "(x):\n    \"\"\"Doc.\"\"\"\n    return x + " +
           std::to_string(i) + "\n";
    if (i % 10 == 0) edits.push_back(edit(Action::replace_body, "f" + std::to_string(i), "return 0"));
  }
  Run r = run(src, edits);
  for (const auto& res : r.results) REQUIRE(res.outcome == Outcome::will_apply);
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("a range over several accepted edits names the earliest, edits in between stay", "[python]") {
  // Overlaps are looked up by position (not by scanning every accepted edit): the
  // answer must still be the first accepted edit the range touches.
  std::string src = "def f():\n    return 1\n\ndef g():\n    return 2\n";
  Edit g_body = edit(Action::replace_body, "g", "return 20");
  Edit f_body = edit(Action::replace_body, "f", "return 10");
  Edit f_prepend = edit(Action::prepend_body, "f", "x = 0");
  Edit f_whole = edit(Action::replace_function, "f", "def f():\n    return 3\n");
  Run r = run(src, {g_body, f_prepend, f_body, f_whole});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[1].outcome == Outcome::will_apply);
  CHECK(r.results[2].outcome == Outcome::will_apply);
  CHECK(r.results[3].message == "overlaps the edit of f (prepend-body)");
  CHECK(r.out == "def f():\n    x = 0\n    return 10\n\ndef g():\n    return 20\n");
}

// ensure-import: placement after the docstring, `from __future__` and the leading
// imports; names already bound; one line for two edits asking for the same import.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

TEST_CASE("ensure-import goes after the docstring when there are no imports", "[python]") {
  std::string src = "\"\"\"Module doc.\"\"\"\n\nX = 1\n";
  std::vector<Edit> edits{import_edit("import torch")};
  Run r = run(src, edits);
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 2);
  CHECK(r.out == "\"\"\"Module doc.\"\"\"\nimport torch\n\nX = 1\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("ensure-import goes after the last of the leading imports", "[python]") {
  std::string src =
      "\"\"\"Doc.\"\"\"\n"
      "from __future__ import annotations\n"
      "\n"
      "import os\n"
      "# a comment\n"
      "from typing import (\n"
      "    Any,\n"
      ")\n"
      "\n"
      "X = 1\n"
      "import late\n";
  std::vector<Edit> edits{import_edit("from packaging.version import Version")};
  Run r = run(src, edits);
  CHECK(r.out ==
        "\"\"\"Doc.\"\"\"\n"
        "from __future__ import annotations\n"
        "\n"
        "import os\n"
        "# a comment\n"
        "from typing import (\n"
        "    Any,\n"
        ")\n"
        "from packaging.version import Version\n"
        "\n"
        "X = 1\n"
        "import late\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("ensure-import goes after `from __future__` when nothing else is imported", "[python]") {
  std::string src = "from __future__ import annotations\ndef f():\n    pass\n";
  std::vector<Edit> edits{import_edit("import a.b as c")};
  Run r = run(src, edits);
  CHECK(r.out == "from __future__ import annotations\nimport a.b as c\ndef f():\n    pass\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("ensure-import keeps a trailing comment of the statement", "[python]") {
  std::vector<Edit> edits{import_edit("import torch  # noqa: F401")};
  Run r = run("import os\n", edits);
  CHECK(r.out == "import os\nimport torch  # noqa: F401\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("ensure-import goes at the top, after heading comments, of a bare module", "[python]") {
  Run r = run("x = 1\n", {import_edit("import torch")});
  CHECK(r.out == "import torch\nx = 1\n");
  r = run("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n", {import_edit("import torch")});
  CHECK(r.out == "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport torch\nx = 1\n");
  r = run("import os", {import_edit("import torch")});
  CHECK(r.out == "import os\nimport torch\n");
}

TEST_CASE("a name bound by a module-level import is already applied", "[python]") {
  std::string src =
      "import torch.cuda\n"
      "from packaging.version import Version as V\n"
      "from x import a\n"
      "def f():\n"
      "    import json\n";
  CHECK(run(src, {import_edit("import torch")}).results[0].outcome == Outcome::already_applied);
  CHECK(run(src, {import_edit("import torch")}).results[0].line == 1);
  CHECK(run(src, {import_edit("from packaging.version import Version as V")}).results[0].outcome ==
        Outcome::already_applied);
  // Bound under another name, or only inside a function: not bound.
  Run r = run(src, {import_edit("from packaging.version import Version")});
  CHECK(r.out ==
        "import torch.cuda\n"
        "from packaging.version import Version as V\n"
        "from x import a\n"
        "from packaging.version import Version\n"
        "def f():\n"
        "    import json\n");
  CHECK(run(src, {import_edit("import json")}).results[0].outcome == Outcome::will_apply);
  // Only the names still missing are imported.
  r = run(src, {import_edit("from x import (a, b as bee)")});
  CHECK(r.out ==
        "import torch.cuda\n"
        "from packaging.version import Version as V\n"
        "from x import a\n"
        "from x import b as bee\n"
        "def f():\n"
        "    import json\n");
}

TEST_CASE("two edits ensuring the same import add it once", "[python]") {
  std::string src = "import os\n\ndef f():\n    pass\n\ndef g():\n    pass\n";
  Edit a = edit(Action::replace_body, "f", "return torch.zeros(1)");
  a.ensure_import = "import torch";
  Edit b = edit(Action::replace_body, "g", "return torch.ones(1)");
  b.ensure_import = "import torch\n";
  std::vector<Edit> edits{a, b, import_edit("import torch")};
  Run r = run(src, edits);
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[1].outcome == Outcome::will_apply);
  CHECK(r.results[2].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "import os\n"
        "import torch\n"
        "\n"
        "def f():\n"
        "    return torch.zeros(1)\n"
        "\n"
        "def g():\n"
        "    return torch.ones(1)\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("an edit whose action is applied but whose import is missing still applies", "[python]") {
  std::string src = "def f():\n    return torch.zeros(1)\n";
  Edit a = edit(Action::replace_body, "f", "return torch.zeros(1)");
  a.ensure_import = "import torch";
  Run r = run(src, {a});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "import torch\ndef f():\n    return torch.zeros(1)\n");
  CHECK(idempotent(r.out, {a}));
}

TEST_CASE("an ensure-import that is not an import statement is refused", "[python]") {
  Run r = run("x = 1\n", {import_edit("torch")});
  CHECK(r.results[0].failure == Failure::invalid);
  CHECK(r.results[0].message == "ensure-import is not one import statement: torch");
}

// "Applied" means "what Python runs" (issue 49 #1): a package that ships a module's source
// beside its compiled twin (mypyc, Cython: charset-normalizer's md.py and
// md.cpython-311-x86_64-linux-gnu.so) runs the twin, as the import system tries
// extension modules before source. A recipe that edits the source is refused, naming the
// twin; the test builds one with the C compiler.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

namespace fs = std::filesystem;

namespace {

constexpr const char* kTwinC = R"C(#include <Python.h>
static PyObject* mess_ratio(PyObject* self, PyObject* arg) { return PyFloat_FromDouble(0.167); }
static PyMethodDef methods[] = {{"mess_ratio", mess_ratio, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "md", NULL, -1, methods};
PyMODINIT_FUNC PyInit_md(void) { return PyModule_Create(&def); }
)C";

std::string python_says(const testsupport::Venv& venv, const std::string& code) {
  auto r = venv.run_python(code);
  REQUIRE(r.status == 0);
  return sitepatch::util::trim(r.out);
}

/// twinpkg/md.py, and beside it md<first extension suffix> built from kTwinC; returns the
/// twin's path.
std::string plant_twin(const testsupport::Venv& venv, const std::string& build) {
  std::string pkg = venv.site_packages + "/twinpkg";
  testsupport::spit(pkg + "/__init__.py", "");
  testsupport::spit(pkg + "/md.py", "def mess_ratio(x):\n    return 0.5\n");
  std::string suffix =
      python_says(venv, "import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])");
  std::string include = python_says(venv, "import sysconfig; print(sysconfig.get_paths()['include'])");
  testsupport::spit(build + "/md.c", kTwinC);
  std::string twin = pkg + "/md" + suffix;
  auto cc = sitepatch::util::run({"cc", "-shared", "-fPIC", "-I" + include, build + "/md.c", "-o", twin});
  INFO(cc.err);
  REQUIRE(cc.status == 0);
  return twin;
}

}  // namespace

TEST_CASE("a module whose compiled twin is what import loads: plan and apply refuse, naming the twin", "[e2e]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string twin = plant_twin(venv, tmp.path + "/build");
  // Python runs the twin, not md.py.
  REQUIRE(python_says(venv, "import twinpkg.md as m; print(m.mess_ratio(1))") == "0.167");
  testsupport::spit(tmp.path + "/fix.yaml",
                    "id: twin-fix\n"
                    "edits:\n"
                    "  - module: twinpkg.md\n"
                    "    function: mess_ratio\n"
                    "    replace-body: return 1.0\n");
  std::string source = testsupport::slurp(venv.site_packages + "/twinpkg/md.py");
  std::string refusal = "twinpkg/md.py is not what `import twinpkg.md` loads: " + twin +
                        ", a compiled twin, is (the import system tries extension modules before source), so an edit "
                        "of the source would never run; install the package without its compiled parts where it "
                        "offers that, or patch the code that calls it";
  for (const char* command : {"plan", "apply"}) {
    auto r = testsupport::run_sitepatch({"--venv", venv.root, command, tmp.path + "/fix.yaml"});
    INFO(command << ": " << r.out << r.err);
    CHECK(r.status == 1);
    CHECK((r.out + r.err).find("twin-fix  twinpkg.md:mess_ratio  replace-body: " + refusal) != std::string::npos);
    CHECK((r.out + r.err).find("will apply") == std::string::npos);
  }
  CHECK(testsupport::slurp(venv.site_packages + "/twinpkg/md.py") == source);

  // Without the twin the same recipe applies, and Python runs the edit.
  fs::remove(twin);
  auto ok = testsupport::run_sitepatch({"--venv", venv.root, "apply", tmp.path + "/fix.yaml"});
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(python_says(venv, "import twinpkg.md as m; print(m.mess_ratio(1))") == "1.0");

  // A reinstall brings the compiled twin back: the file still holds the edit, and nothing
  // runs it. verify and status say so (exit 3); the rollback status names clears it.
  std::string patched = testsupport::slurp(venv.site_packages + "/twinpkg/md.py");
  plant_twin(venv, tmp.path + "/build2");
  testsupport::spit(venv.site_packages + "/twinpkg/md.py", patched);
  REQUIRE(python_says(venv, "import twinpkg.md as m; print(m.mess_ratio(1))") == "0.167");
  auto v = testsupport::run_sitepatch({"--venv", venv.root, "verify"});
  CHECK(v.status == 3);
  CHECK(v.out.find("broken: " + refusal) != std::string::npos);
  auto st = testsupport::run_sitepatch({"--venv", venv.root, "status"});
  CHECK(st.status == 3);
  CHECK(st.out.find("twin-fix  broken") != std::string::npos);
  CHECK(st.out.find("twinpkg/md.py: " + refusal) != std::string::npos);
  CHECK(st.out.find("rollback twin-fix    # it does not run as it is;") != std::string::npos);
  auto rb = testsupport::run_sitepatch({"--venv", venv.root, "rollback", "twin-fix"});
  INFO(rb.err);
  CHECK(rb.status == 0);
  CHECK(testsupport::run_sitepatch({"--venv", venv.root, "status"}).status == 0);
}

TEST_CASE("audit reads a module a compiled twin shadows as compiled: its source's calls never run", "[e2e][audit]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string twin = plant_twin(venv, tmp.path + "/build");
  // The source beside the twin shells out; Python runs the twin, which does not.
  testsupport::spit(venv.site_packages + "/twinpkg/md.py",
                    "import subprocess\n\n\ndef mess_ratio(x):\n    return float(subprocess.check_output(['nproc']))\n");
  testsupport::spit(venv.site_packages + "/twinuse.py", "import twinpkg.md\n\n\ndef score(x):\n"
                                                        "    return twinpkg.md.mess_ratio(x)\n");
  auto with_twin = testsupport::run_sitepatch({"--venv", venv.root, "audit", "twinuse:score"});
  INFO(with_twin.out << with_twin.err);
  CHECK(with_twin.out.find("subprocess.check_output") == std::string::npos);
  CHECK(with_twin.out.find("twinuse:score: no flagged operation found in 1 function walked; 1 call could not be "
                           "followed") == 0);
  auto listed = testsupport::run_sitepatch({"--venv", venv.root, "-v", "audit", "twinuse:score"});
  std::string suffix = twin.substr(twin.find("/md") + 3);
  CHECK(listed.out.find("twinuse.py:5  twinuse:score  twinpkg.md.mess_ratio  (twinpkg.md.mess_ratio is compiled: "
                        "twinpkg/md" + suffix + " is what import loads, not twinpkg/md.py, and the walk cannot read "
                        "it)") != std::string::npos);
  // Without the twin the source is what runs, and the chain is found.
  std::filesystem::remove(twin);
  auto source = testsupport::run_sitepatch({"--venv", venv.root, "audit", "twinuse:score"});
  INFO(source.out << source.err);
  CHECK(source.out.find("twinuse:score reaches 1 flagged operation") == 0);
  CHECK(source.out.find("subprocess.check_output") != std::string::npos);
}

TEST_CASE("PyPI's charset-normalizer 3.4.1: md.py's compiled twin is what runs, and plan says so", "[e2e][pypi]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  // Pinned, downloaded once for this venv's Python (the wheel is per interpreter) into the tests' cache.
  const char* home = std::getenv("HOME");
  std::string dir = std::string(home ? home : "/tmp") + "/.cache/sitepatch-tests/pypi";
  std::string tag = python_says(venv, "import sys; print('cp%d%d' % sys.version_info[:2])");
  auto find = [&] {
    std::error_code ec;
    if (fs::is_directory(dir, ec))
      for (auto& e : fs::directory_iterator(dir))
        if (sitepatch::util::starts_with(e.path().filename().string(), "charset_normalizer-3.4.1-" + tag + "-"))
          return e.path().string();
    return std::string();
  };
  if (find().empty()) venv.pip({"download", "--no-deps", "--only-binary=:all:", "-d", dir, "charset-normalizer==3.4.1"});
  std::string wheel = find();
  REQUIRE(!wheel.empty());
  venv.install(wheel);
  std::string twin = python_says(venv, "import charset_normalizer.md as m; print(m.__file__)");
  REQUIRE(sitepatch::util::ends_with(twin, ".so"));
  testsupport::spit(tmp.path + "/fix.yaml",
                    "id: mess\nedits:\n  - module: charset_normalizer.md\n    function: mess_ratio\n"
                    "    replace-body: return 0.0\n");
  auto r = testsupport::run_sitepatch({"--venv", venv.root, "plan", tmp.path + "/fix.yaml"});
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("charset_normalizer/md.py is not what `import charset_normalizer.md` loads: " + twin +
                   ", a compiled twin, is") != std::string::npos);
  CHECK(r.out.empty());  // no diff: apply would not make it
}

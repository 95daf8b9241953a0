// src/engine/proofs/: what running the user's own command shows, with nothing written:
// try (a plan's new texts loaded by an import hook, try_hook.py, in every Python the
// command starts; apply's --check), and explain --run (explain_run.cpp: a candidate fix
// kept only when dynamo's counts improve, run after run), whose candidates, verdicts and
// hint checks are run_candidates.cpp, run_verdict.cpp and run_hints.cpp (run_impl.hpp).
//
// try: the plan's new texts, handed to an import hook in the command's Pythons.
#include "sitepatch/engine/try.hpp"

#include "sitepatch/site/environment.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch_diff_hook_source.hpp"
#include "sitepatch_observe_hook_source.hpp"
#include "sitepatch_try_hook_source.hpp"

namespace sitepatch::engine {

host::CommandRun try_run(const Plan& p, const std::vector<std::string>& argv) {
  // try_hook.py's manifest: lines and byte counts, which Python reads without json.
  std::string manifest = "sitepatch-try 1\n";
  for (const FileChange& f : p.files) {
    std::string module = site::module_for_file(f.rel);
    if (f.path.find('\n') != std::string::npos)
      throw Error("cannot try a change to a file whose path holds a newline: " + f.path);
    manifest += f.path + "\n" + module + "\n" + f.old_sha + "\n" + std::to_string(f.new_text.size()) + "\n" + f.new_text;
  }
  host::CommandRun run;
  run.argv = argv;
  run.files["sitecustomize.py"] = embedded::try_hook_source;
  run.files["sitepatch_diff.py"] = embedded::diff_hook_source;  // imported only under explain --run
  run.files["sitepatch_observe.py"] = embedded::observe_hook_source;
  run.files["try.manifest"] = manifest;
  run.env["SITEPATCH_TRY"] = "{dir}/try.manifest";
  run.env["PYTHONDONTWRITEBYTECODE"] = "1";
  run.path_first = {"PYTHONPATH"};
  return run;
}

namespace {

// Imports each module named on its command line; each failure's traceback on stderr.
// Python 3.6 and later.
constexpr const char* kImportCheck = R"(import importlib, sys, traceback
failed = 0
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException:
        failed += 1
        sys.stderr.write("import %s failed:\n%s" % (name, traceback.format_exc()))
sys.exit(1 if failed else 0)
)";

}  // namespace

CheckResult check_applied(Session& s, const Plan& p, const std::string& command) {
  CheckResult c;
  host::CommandRun run;
  run.capture = true;
  if (command.empty()) {
    c.what = "importing the patched modules";
    // -I: not the caller's folder first on sys.path (a traceback.py there would run
    // as root), nor PYTHONPATH or the user's site; the environment's own site stays.
    run.argv = {s.env.python, "-I", "-c", kImportCheck};
    for (const FileChange& f : p.files) run.argv.push_back(site::module_for_file(f.rel));
  } else {
    c.what = "`" + command + "`";
    run.argv = {"sh", "-c", command};
    run.env["VIRTUAL_ENV"] = s.env.prefix;
    run.path_first_dirs["PATH"] = s.env.prefix + "/bin";
  }
  c.run = s.host.run_command(run);
  c.ok = c.run.status == 0;
  return c;
}

}  // namespace sitepatch::engine
